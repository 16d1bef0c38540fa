import type { NavEntry, RouteEntry } from '../routes';
import { RunsPage } from './list';
import { perSession } from './per-session';
import { RunPage } from './run';

export const runsRoutes: RouteEntry[] = [
  { path: '/runs', component: perSession(RunsPage) },
  { path: '/runs/:processId', component: perSession(RunPage) },
];
export const runsNav: NavEntry[] = [{ href: '/runs', label: 'Runs' }];
