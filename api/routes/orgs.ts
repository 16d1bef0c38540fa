import type { RouteDef } from '../route.js';
import { orgCoreRoutes } from './orgs-core.js';
import { orgMemberRoutes } from './orgs-members.js';
import { orgSettingsRoutes } from './orgs-settings.js';
import { orgSwitchRoutes } from './orgs-switch.js';
import { orgWorkspaceRoutes } from './orgs-workspaces.js';

/** The Organizations group of the catalog: organizations, members, invitations, workspaces, teams, switching, budget, LLM credentials. */
export const orgRoutes: RouteDef[] = [...orgCoreRoutes, ...orgMemberRoutes, ...orgWorkspaceRoutes, ...orgSwitchRoutes, ...orgSettingsRoutes];
