import type { RouteDef } from '../route.js';

export const mcpRoutes: RouteDef[] = [];
