import type { NavEntry, RouteEntry } from '../routes';
import { RunsPage } from './list';

export const runsRoutes: RouteEntry[] = [{ path: '/runs', component: RunsPage }];
export const runsNav: NavEntry[] = [{ href: '/runs', label: 'Runs' }];
