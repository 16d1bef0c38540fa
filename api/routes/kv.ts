import type { RouteDef } from '../route.js';

export const kvRoutes: RouteDef[] = [];
