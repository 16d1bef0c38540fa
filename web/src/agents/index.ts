import type { NavEntry, RouteEntry } from '../routes';
import { AgentChatPage } from './chat';
import { AgentsPage } from './list';

export const agentsRoutes: RouteEntry[] = [
  { path: '/agents', component: AgentsPage },
  { path: '/agents/:agentId', component: AgentChatPage },
];
export const agentsNav: NavEntry[] = [{ href: '/agents', label: 'Agents' }];
