import { DomainError } from '../shared/decider.js';
import type { FlowCommandOf } from './commands.js';
import type { FlowEvent } from './events.js';
import { flowNotFound, requireNode, validationFailed } from './guards.js';
import type { NodeData } from './node-data.js';
import { clearSecretFields, keepStoredSecrets } from './secrets.js';
import type { FlowState } from './state.js';

/**
 * A secret in clear reaching the decider means a writer skipped the command layer's sealing: a
 * bug, refused loudly rather than written into the log for good.
 */
function refuseClear(data: unknown, prefix: string): void {
  const fields = clearSecretFields(data);
  if (fields.length > 0) {
    throw new DomainError('SECRET_NOT_SEALED', `node secrets must be sealed before they reach the flow: ${fields.map((f) => `${prefix}.${f}`).join(', ')}`, 'internal', {
      fields: fields.map((f) => `${prefix}.${f}`),
    });
  }
}

/**
 * The command's node data as it will be stored: sealed values as given, masks replaced by the
 * secret stored at the same place in `stored` (the node's current data; none for a new node).
 */
export function settleNodeSecrets<T>(data: T, stored: unknown, prefix: string): T {
  refuseClear(data, prefix);
  const kept = keepStoredSecrets(data, stored, prefix);
  if (kept.problems.length > 0) throw validationFailed(kept.problems);
  return kept.data;
}

/** Every node of a whole graph (create, replace), each against the stored node with the same id. */
export function settleGraphSecrets<N extends { id: string; data: unknown }>(nodes: N[], state: FlowState): N[] {
  return nodes.map((node, i) => {
    const stored = state.nodes.find((n) => n.id === node.id)?.data;
    return { ...node, data: settleNodeSecrets(node.data, stored, `body.nodes.${i}.data`) };
  });
}

export function resealFlowSecrets(command: FlowCommandOf<'ResealFlowSecrets'>, state: FlowState): FlowEvent[] {
  // A deleted flow's events are still read (audit, versions): they are resealed too.
  if (!state.exists) throw flowNotFound();
  const nodes = command.nodes.map(({ nodeId, data }) => {
    requireNode(state, nodeId);
    refuseClear(data, `nodes.${nodeId}.data`);
    return { nodeId, data: data as NodeData };
  });
  return [{ type: 'FlowSecretsResealed', data: { nodes, clearEvents: command.clearEvents, rewrittenInPlace: command.rewrittenInPlace, at: command.at } }];
}
