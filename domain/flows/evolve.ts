import type { FlowEvent } from './events.js';
import { DEFAULT_TRIGGER, appendHistoryEntry, applyNodePatch, historyOf, initialFlowState, nodeTriggerOf, own, without, type FlowState } from './state.js';

/**
 * Every event moves `version` on by one, whatever its type (an unknown type included), so that
 * `version` is always the stream revision of the last folded event.
 */
export function evolveFlow(state: FlowState, event: FlowEvent): FlowState {
  const next = apply(state, event);
  return { ...next, version: state.version + 1 };
}

function apply(state: FlowState, event: FlowEvent): FlowState {
  switch (event.type) {
    case 'FlowCreated': {
      const d = event.data;
      return {
        ...initialFlowState,
        exists: true,
        id: d.flowId,
        name: d.name,
        description: d.description,
        ownerId: d.ownerId,
        orgId: d.orgId,
        workspaceId: d.workspaceId,
        createdAt: d.createdAt,
        updatedAt: d.createdAt,
        nodes: d.nodes,
        edges: d.edges,
      };
    }
    case 'FlowReplaced': {
      const { name, description, nodes, edges, at } = event.data;
      // Triggers and history of nodes that survive the replacement stay; the others go with their node.
      const gone = state.nodes.map((n) => n.id).filter((id) => !nodes.some((n) => n.id === id));
      return { ...state, name, description, nodes, edges, nodeTriggers: without(state.nodeTriggers, gone), history: without(state.history, gone), updatedAt: at };
    }
    case 'FlowDeleted':
      return { ...state, deleted: true, updatedAt: event.data.at };
    case 'FlowArchived':
      return { ...state, archived: true, updatedAt: event.data.at };
    case 'FlowUnarchived':
      return { ...state, archived: false, updatedAt: event.data.at };
    case 'FlowRenamed':
      return { ...state, name: event.data.name, updatedAt: event.data.at };
    case 'NodeAdded':
      return { ...state, nodes: [...state.nodes, event.data.node], updatedAt: event.data.at };
    case 'NodeUpdated': {
      const { nodeId, at, ...patch } = event.data;
      return { ...state, nodes: state.nodes.map((n) => (n.id === nodeId ? applyNodePatch(n, patch) : n)), updatedAt: at };
    }
    case 'NodeDeleted': {
      const { nodeId, removedEdgeIds, updatedConditions, at } = event.data;
      const removed = new Set(removedEdgeIds);
      const conditionsOf = new Map(updatedConditions.map((u) => [u.nodeId, u.conditions]));
      const nodes = state.nodes
        .filter((n) => n.id !== nodeId)
        .map((n) => (conditionsOf.has(n.id) ? { ...n, data: { ...n.data, conditions: conditionsOf.get(n.id) } } : n));
      return {
        ...state,
        nodes,
        edges: state.edges.filter((e) => !removed.has(e.id)),
        nodeTriggers: without(state.nodeTriggers, [nodeId]),
        history: without(state.history, [nodeId]),
        updatedAt: at,
      };
    }
    case 'ConnectionAdded':
      return { ...state, edges: [...state.edges, event.data.edge], updatedAt: event.data.at };
    case 'ConnectionUpdated': {
      const { edge, at } = event.data;
      return { ...state, edges: state.edges.map((e) => (e.id === edge.id ? edge : e)), updatedAt: at };
    }
    case 'ConnectionRemoved':
      return { ...state, edges: state.edges.filter((e) => e.id !== event.data.edgeId), updatedAt: event.data.at };
    case 'FlowTriggerUpdated': {
      const { enabled, allowedMethods, inputSchema, at } = event.data;
      return { ...state, trigger: { ...state.trigger, enabled, allowedMethods, inputSchema }, updatedAt: at };
    }
    case 'FlowTriggerKeyRegenerated':
      return { ...state, trigger: { ...state.trigger, keyHash: event.data.keyHash, keyCreatedAt: event.data.at }, updatedAt: event.data.at };
    case 'NodeTriggerUpdated': {
      const { nodeId, enabled, allowedMethods, inputSchema, at } = event.data;
      const trigger = { ...nodeTriggerOf(state, nodeId), enabled, allowedMethods, inputSchema };
      return { ...state, nodeTriggers: { ...state.nodeTriggers, [nodeId]: trigger }, updatedAt: at };
    }
    case 'NodeTriggerKeyRegenerated': {
      const { nodeId, keyHash, at } = event.data;
      const trigger = { ...(own(state.nodeTriggers, nodeId) ?? DEFAULT_TRIGGER), keyHash, keyCreatedAt: at };
      return { ...state, nodeTriggers: { ...state.nodeTriggers, [nodeId]: trigger }, updatedAt: at };
    }
    // History is what runs did, not an edit: it leaves updatedAt alone (the list is sorted by it).
    case 'NodeExecutionRecorded': {
      const { nodeId, entry } = event.data;
      return { ...state, history: { ...state.history, [nodeId]: appendHistoryEntry(historyOf(state, nodeId), entry) } };
    }
    case 'NodeHistoryEntryDeleted': {
      const { nodeId, entryId } = event.data;
      return { ...state, history: { ...state.history, [nodeId]: historyOf(state, nodeId).filter((e) => e.entryId !== entryId) } };
    }
    case 'NodeHistoryCleared':
      return { ...state, history: without(state.history, [event.data.nodeId]) };
    case 'FlowHistoryCleared':
      return { ...state, history: {} };
    default:
      return state;
  }
}
