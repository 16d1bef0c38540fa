import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, sealClearSecrets, sealNodeSecrets, type FlowCommand, type FlowEvent, type FlowScope, type FlowState } from '../domain/flows/index.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import { handleCommand, loadState, PreconditionFailedError, type CommandContext, type HandleResult } from './handle.js';

/** The tenant a request acts in: a flow outside it answers 404 from the decider itself. */
export function flowScopeOf(principal: Principal): FlowScope {
  return { userId: principal.userId, orgId: principal.orgId, workspaceId: principal.workspaceId };
}

type WithoutBase<C> = C extends unknown ? Omit<C, 'at' | 'scope'> : never;
export type FlowWriteCommand = WithoutBase<FlowCommand>;

/**
 * Seals every node secret a client sent (header values, `{"$secret": …}` variables) before the
 * command exists, so plaintext never reaches the decider, an event or the bus; masks sent back
 * stay masks, for the decider to replace with the stored secret.
 */
export function sealFlowCommand(command: FlowWriteCommand, sealer: Pick<SecretSealer, 'seal'>): FlowWriteCommand {
  const seal = <T>(data: T): T => sealNodeSecrets(data, (plaintext) => sealer.seal(plaintext));
  switch (command.type) {
    case 'CreateFlow':
      return command.nodes ? { ...command, nodes: command.nodes.map((n) => ({ ...n, data: seal(n.data) })) } : command;
    case 'ReplaceFlow': {
      // A restored version's nodes come from our own log, sealed already: only what is still in clear is sealed.
      const settle = command.restoredFrom === undefined ? seal : <T>(data: T): T => sealClearSecrets(data, (plaintext) => sealer.seal(plaintext));
      return { ...command, nodes: command.nodes.map((n) => ({ ...n, data: settle(n.data) })) };
    }
    case 'AddNode':
      return { ...command, node: { ...command.node, data: seal(command.node.data) } };
    case 'UpdateNode':
      return command.patch.data ? { ...command, patch: { ...command.patch, data: seal(command.patch.data) } } : command;
    default:
      return command;
  }
}

/**
 * Every flow write goes through here: the command gets its time from the context and, for user
 * requests, the caller's scope; `expectedRevision` is the client's If-Match (412 when stale).
 */
export function executeFlowCommand(
  store: EventStore,
  context: CommandContext,
  flowId: string,
  command: FlowWriteCommand,
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

/**
 * A user's flow write, in the caller's scope with the client's If-Match. The If-Match check runs
 * before the decider's scope check, and a 412 about a flow the caller cannot see would reveal that
 * it exists, so it becomes the usual FLOW_NOT_FOUND. `position` is where the flow stands after the
 * write, also when nothing was appended (archiving an archived flow), so the caller's answer is
 * never older than its previous write.
 */
export async function writeUserFlow(
  store: EventStore,
  context: CommandContext,
  flowId: string,
  command: FlowWriteCommand,
  options: { scope: FlowScope; expectedRevision?: number; sealer: Pick<SecretSealer, 'seal'> },
): Promise<{ result: HandleResult<FlowState, FlowEvent>; position: number | null }> {
  let result: HandleResult<FlowState, FlowEvent>;
  try {
    result = await executeFlowCommand(store, context, flowId, sealFlowCommand(command, options.sealer), options);
  } catch (err) {
    if (err instanceof PreconditionFailedError) {
      const { state } = await loadState(store, flowStreamId(flowId), flowDecider);
      if (!state.exists || state.deleted || !isVisibleTo(state, options.scope)) throw flowNotFound();
    }
    throw err;
  }
  let position = result.position;
  if (position === null && result.revision >= 0) {
    const [last] = await store.readStream(flowStreamId(flowId), { fromRevision: result.revision, maxCount: 1 });
    position = last?.position ?? null;
  }
  return { result, position };
}

/** `If-Match: "12"` (or W/"12") → 12; absent → undefined; anything else → NaN for the route to refuse. */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (!header) return undefined;
  const match = /^(?:W\/)?"?(\d+)"?$/.exec(header.trim());
  return match ? Number(match[1]) : Number.NaN;
}
