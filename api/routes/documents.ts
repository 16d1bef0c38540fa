import type { RouteDef } from '../route.js';

export const documentsRoutes: RouteDef[] = [];
