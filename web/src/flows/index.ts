import type { NavEntry, RouteEntry } from '../routes';
import { FlowsPage } from './list';

export const flowsRoutes: RouteEntry[] = [{ path: '/flows', component: FlowsPage }];
export const flowsNav: NavEntry[] = [{ href: '/flows', label: 'Flows' }];
