import type { NavEntry, RouteEntry } from '../routes';
import { RunsPage } from './list';
import { RunPage } from './run';

export const runsRoutes: RouteEntry[] = [
  { path: '/runs', component: RunsPage },
  { path: '/runs/:processId', component: RunPage },
];
export const runsNav: NavEntry[] = [{ href: '/runs', label: 'Runs' }];
