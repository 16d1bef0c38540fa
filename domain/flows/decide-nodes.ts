import { DomainError } from '../shared/decider.js';
import type { FlowCommandOf } from './commands.js';
import { settleNodeSecrets } from './decide-secrets.js';
import { idProblems, toNode } from './definition.js';
import type { FlowEvent, FlowNode } from './events.js';
import { checkDefinitionSize, limitExceeded, requireFlow, requireNode, validationFailed } from './guards.js';
import { jsonEqual, cloneJson } from './json.js';
import { MAX_NODES_PER_FLOW } from './limits.js';
import { nodeRendererTypeSchema, positionSchema, type NodeData } from './node-data.js';
import { findNode, type FlowState } from './state.js';
import { issuesToProblems, validateNode, validateNodeData, type FieldProblem } from './validate-node.js';

export const DUPLICATE_OFFSET = { x: 40, y: 40 };

function requireFreeNodeId(state: FlowState, nodeId: string, field: string): void {
  const problems = idProblems(nodeId, field, 'node');
  if (problems.length > 0) throw validationFailed(problems);
  if (findNode(state, nodeId)) throw new DomainError('NODE_ID_TAKEN', `node id ${nodeId} is already used in this flow`, 'conflict', { nodeId });
  if (state.nodes.length >= MAX_NODES_PER_FLOW) throw limitExceeded('nodesPerFlow', MAX_NODES_PER_FLOW, state.nodes.length + 1);
}

/** Fields are named as in the add-node body: `body.type`, `body.position.x`, `body.data.prompt`. */
export function addNode(command: FlowCommandOf<'AddNode'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  requireFreeNodeId(state, command.nodeId, 'body.id');
  const nodeIds = [...state.nodes.map((n) => n.id), command.nodeId];
  const input = { ...command.node, data: settleNodeSecrets(command.node.data, undefined, 'body.data') };
  const problems = validateNode(input, { nodeIds, selfId: command.nodeId });
  if (problems.length > 0) throw validationFailed(problems.map((p) => ({ field: `body.${p.field}`.replace(/\.$/, ''), message: p.message })));
  const node = toNode(command.nodeId, input);
  checkDefinitionSize([...state.nodes, node], state.edges);
  return [{ type: 'NodeAdded', data: { node, duplicatedFrom: null, at: command.at } }];
}

/**
 * Only what differs goes into the event (a drag is a position, not the whole node). `data` is
 * validated when the patch touches it; a position-only change never fails on older data.
 */
export function updateNode(command: FlowCommandOf<'UpdateNode'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const node = requireNode(state, command.nodeId);
  const { patch } = command;
  const problems: FieldProblem[] = [];
  if (patch.type !== undefined) {
    const parsed = nodeRendererTypeSchema.safeParse(patch.type);
    if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues, 'body.type'));
  }
  if (patch.position !== undefined) {
    const parsed = positionSchema.safeParse(patch.position);
    if (!parsed.success) problems.push(...issuesToProblems(parsed.error.issues, 'body.position'));
  }
  const patchData = patch.data === undefined ? undefined : settleNodeSecrets(patch.data, node.data, 'body.data');
  const dataChanges = Object.fromEntries(Object.entries(patchData ?? {}).filter(([k, v]) => v !== undefined && !jsonEqual(node.data[k], v)));
  const merged: NodeData = { ...node.data, ...dataChanges };
  if (Object.keys(dataChanges).length > 0) {
    const ids = state.nodes.map((n) => n.id);
    problems.push(...validateNodeData(merged, { nodeIds: ids, selfId: node.id }).map((p) => ({ field: `body.${p.field}`, message: p.message })));
  }
  if (problems.length > 0) throw validationFailed(problems);
  const typeChanged = patch.type !== undefined && patch.type !== node.type;
  const position = patch.position && { x: patch.position.x, y: patch.position.y };
  const positionChanged = position !== undefined && !jsonEqual(position, node.position);
  if (!typeChanged && !positionChanged && Object.keys(dataChanges).length === 0) return [];
  const updated: FlowNode = { ...node, type: typeChanged ? patch.type! : node.type, position: positionChanged ? position : node.position, data: merged };
  checkDefinitionSize(state.nodes.map((n) => (n.id === node.id ? updated : n)), state.edges);
  return [
    {
      type: 'NodeUpdated',
      data: {
        nodeId: node.id,
        ...(typeChanged && { type: patch.type }),
        ...(positionChanged && { position }),
        ...(Object.keys(dataChanges).length > 0 && { data: dataChanges as NodeData }),
        at: command.at,
      },
    },
  ];
}

/** One event removes the node, every edge touching it, and every condition of another node that targets it. */
export function deleteNode(command: FlowCommandOf<'DeleteNode'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const { id: nodeId } = requireNode(state, command.nodeId);
  const removedEdgeIds = state.edges.filter((e) => e.source === nodeId || e.target === nodeId).map((e) => e.id);
  const updatedConditions = state.nodes
    .filter((n) => n.id !== nodeId && Array.isArray(n.data.conditions) && n.data.conditions.some((c) => c.targetNodeId === nodeId))
    .map((n) => ({ nodeId: n.id, conditions: n.data.conditions!.filter((c) => c.targetNodeId !== nodeId) }));
  return [{ type: 'NodeDeleted', data: { nodeId, removedEdgeIds, updatedConditions, at: command.at } }];
}

/** A copy of type and data at an offset; no edges, trigger or history (those belong to the original). */
export function duplicateNode(command: FlowCommandOf<'DuplicateNode'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const original = requireNode(state, command.nodeId);
  requireFreeNodeId(state, command.newNodeId, 'body.newNodeId');
  const offset = command.offset ?? DUPLICATE_OFFSET;
  const node: FlowNode = {
    id: command.newNodeId,
    type: original.type,
    position: { x: original.position.x + offset.x, y: original.position.y + offset.y },
    data: cloneJson(original.data),
  };
  checkDefinitionSize([...state.nodes, node], state.edges);
  return [{ type: 'NodeAdded', data: { node, duplicatedFrom: original.id, at: command.at } }];
}
