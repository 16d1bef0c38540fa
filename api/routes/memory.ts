import type { RouteDef } from '../route.js';

export const memoryRoutes: RouteDef[] = [];
