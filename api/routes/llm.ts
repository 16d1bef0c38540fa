import type { RouteDef } from '../route.js';

// Being written (issue 5).
export const llmRoutes: RouteDef[] = [];
