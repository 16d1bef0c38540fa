import { flowDecider, flowStreamId, type FlowCommand, type FlowScope } from '../domain/flows/index.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

/** The tenant a request acts in: a flow outside it answers 404 from the decider itself. */
export function flowScopeOf(principal: Principal): FlowScope {
  return { userId: principal.userId, orgId: principal.orgId, workspaceId: principal.workspaceId };
}

type WithoutBase<C> = C extends unknown ? Omit<C, 'at' | 'scope'> : never;

/**
 * Every flow write goes through here: the command gets its time from the context and, for user
 * requests, the caller's scope; `expectedRevision` is the client's If-Match (412 when stale).
 */
export function executeFlowCommand(
  store: EventStore,
  context: CommandContext,
  flowId: string,
  command: WithoutBase<FlowCommand>,
  options: { scope?: FlowScope; expectedRevision?: number } = {},
) {
  return handleCommand(store, {
    streamId: flowStreamId(flowId),
    decider: flowDecider,
    command: { ...command, at: context.now.toISOString(), ...(options.scope ? { scope: options.scope } : {}) } as FlowCommand,
    context,
    expectedRevision: options.expectedRevision,
  });
}

/** `If-Match: "12"` (or W/"12") → 12; absent → undefined; anything else → NaN for the route to refuse. */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (!header) return undefined;
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(header.trim());
  return match ? Number(match[1]) : Number.NaN;
}
