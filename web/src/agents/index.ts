import type { NavEntry, RouteEntry } from '../routes';
import { AgentsPage } from './list';

export const agentsRoutes: RouteEntry[] = [{ path: '/agents', component: AgentsPage }];
export const agentsNav: NavEntry[] = [{ href: '/agents', label: 'Agents' }];
