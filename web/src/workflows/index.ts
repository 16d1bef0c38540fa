import type { NavEntry, RouteEntry } from '../routes';
import { perSession } from '../runs/per-session';
import { WorkflowsPage } from './list';
import { WorkflowPage } from './workflow';

export const workflowsRoutes: RouteEntry[] = [
  { path: '/workflows', component: perSession(WorkflowsPage) },
  { path: '/workflows/:workflowId', component: perSession(WorkflowPage) },
];
export const workflowsNav: NavEntry[] = [{ href: '/workflows', label: 'Workflows' }];
