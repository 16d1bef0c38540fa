import type { NavEntry, RouteEntry } from '../routes';
import { perSession } from '../runs/per-session';
import { AgentChatPage } from './chat';
import { AgentsPage } from './list';

export const agentsRoutes: RouteEntry[] = [
  { path: '/agents', component: perSession(AgentsPage) },
  { path: '/agents/:agentId', component: perSession(AgentChatPage) },
];
export const agentsNav: NavEntry[] = [{ href: '/agents', label: 'Agents' }];
