import type { NavEntry, RouteEntry } from '../routes';
import { FlowCanvasPage } from './canvas-page';
import { FlowsPage } from './list';

export const flowsRoutes: RouteEntry[] = [
  { path: '/flows', component: FlowsPage },
  { path: '/flows/:flowId', component: FlowCanvasPage },
];
export const flowsNav: NavEntry[] = [{ href: '/flows', label: 'Flows' }];
