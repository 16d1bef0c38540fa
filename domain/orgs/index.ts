import { decider, type Decider } from '../shared/decider.js';
import type { OrgCommand } from './commands.js';
import { decideOrg } from './decide.js';
import { orgEventSchemas, type OrgEvent } from './events.js';
import { evolveOrg, initialOrgState, type OrgState } from './state.js';

export * from './events.js';
export type { OrgCommand } from './commands.js';
export type { OrgState } from './state.js';
export { DEFAULT_WORKSPACE_NAME, decideOrg } from './decide.js';

export const orgStreamId = (orgId: string) => `org-${orgId}`;

export const orgDecider: Decider<OrgCommand, OrgState, OrgEvent> = decider(initialOrgState, evolveOrg, decideOrg, orgEventSchemas);
