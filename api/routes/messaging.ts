import type { RouteDef } from '../route.js';

export const messagingRoutes: RouteDef[] = [];
