import type { NavEntry, RouteEntry } from '../routes';
import { WorkflowsPage } from './list';

export const workflowsRoutes: RouteEntry[] = [{ path: '/workflows', component: WorkflowsPage }];
export const workflowsNav: NavEntry[] = [{ href: '/workflows', label: 'Workflows' }];
