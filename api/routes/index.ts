import type { RouteDef } from '../route.js';
import { healthRoutes } from './health.js';
import { probeRoutes } from './probes.js';

/** The whole route table: registration, validation and the OpenAPI document all come from it. */
export const allRoutes: RouteDef[] = [...healthRoutes, ...probeRoutes];
