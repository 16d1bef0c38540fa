import { orgDecider, orgStreamId, type OrgCommand } from '../domain/orgs/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

type Without<C, K extends keyof C> = C extends unknown ? Omit<C, K> : never;
export type OrgCommandInput = Without<OrgCommand, 'at'>;

/**
 * Runs one command against `org-<orgId>`; the time comes from the request's context. Its own
 * module so that the organization and invitation handlers share it without importing each other.
 */
export function handleOrgCommand(store: EventStore, context: CommandContext, orgId: string, command: OrgCommandInput) {
  return handleCommand(store, {
    streamId: orgStreamId(orgId),
    decider: orgDecider,
    command: { ...command, at: context.now.toISOString() } as OrgCommand,
    context,
  });
}
