import type { RouteDef } from '../route.js';

// Being written (issue 4).
export const triggerRoutes: RouteDef[] = [];
