import type { RouteDef } from '../route.js';

// Being written (issue 3).
export const cliRoutes: RouteDef[] = [];
