import type { RouteDef } from '../route.js';

export const webhooksRoutes: RouteDef[] = [];
