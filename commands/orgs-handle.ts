import { orgDecider, orgStreamId, type OrgCommand } from '../domain/orgs/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, type CommandContext, type WithoutAt } from './handle.js';

export type OrgCommandInput = WithoutAt<OrgCommand>;

/**
 * Runs one command against `org-<orgId>`; the time comes from the request's context. Its own
 * module so that the organization and invitation handlers share it without importing each other.
 */
export function handleOrgCommand(store: EventStore, context: CommandContext, orgId: string, command: OrgCommandInput) {
  return handleAtContextTime(store, context, orgStreamId(orgId), orgDecider, command);
}
