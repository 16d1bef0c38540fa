import type { NavEntry, RouteEntry } from '../routes';
import { WorkflowsPage } from './list';
import { WorkflowPage } from './workflow';

export const workflowsRoutes: RouteEntry[] = [
  { path: '/workflows', component: WorkflowsPage },
  { path: '/workflows/:workflowId', component: WorkflowPage },
];
export const workflowsNav: NavEntry[] = [{ href: '/workflows', label: 'Workflows' }];
