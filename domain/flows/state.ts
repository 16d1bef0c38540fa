import { MAX_HISTORY_ENTRIES_PER_NODE } from './limits.js';
import type { FlowEdge, FlowEvent, FlowNode, HistoryEntry, TriggerMethod } from './events.js';
import type { McpExposure } from './mcp-exposure.js';
import type { NodeData, Position } from './node-data.js';

export interface TriggerSettings {
  enabled: boolean;
  allowedMethods: TriggerMethod[];
  inputSchema: Record<string, unknown> | null;
  /** sha256 hex of the current key; null until a key is generated. */
  keyHash: string | null;
  keyCreatedAt: string | null;
}

/** A trigger nobody configured: off, POST only, no key (so it cannot be called even once enabled). */
export const DEFAULT_TRIGGER: TriggerSettings = Object.freeze({
  enabled: false,
  allowedMethods: ['POST'],
  inputSchema: null,
  keyHash: null,
  keyCreatedAt: null,
}) as TriggerSettings;

export interface FlowState {
  exists: boolean;
  deleted: boolean;
  id: string;
  name: string;
  description: string;
  archived: boolean;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  createdAt: string;
  /** Last change of the definition, settings or triggers; node history does not count as an edit. */
  updatedAt: string;
  /** Revision of the last folded event (0-based, -1 for no event): the flow's public `version` and ETag. */
  version: number;
  /** In insertion order, which is the order the API lists them in. */
  nodes: FlowNode[];
  edges: FlowEdge[];
  trigger: TriggerSettings;
  /** Only nodes whose trigger was ever configured; others use DEFAULT_TRIGGER (see nodeTriggerOf). */
  nodeTriggers: Record<string, TriggerSettings>;
  /** Oldest first, at most MAX_HISTORY_ENTRIES_PER_NODE per node. */
  history: Record<string, HistoryEntry[]>;
  /** The flow as an MCP tool (FlowMcpExposureSet); null until ever set. */
  mcp: McpExposure | null;
}

export const initialFlowState: FlowState = {
  exists: false,
  deleted: false,
  id: '',
  name: '',
  description: '',
  archived: false,
  ownerId: '',
  orgId: null,
  workspaceId: null,
  createdAt: '',
  updatedAt: '',
  version: -1,
  nodes: [],
  edges: [],
  trigger: DEFAULT_TRIGGER,
  nodeTriggers: {},
  history: {},
  mcp: null,
};

/** Reads a record without falling back on Object.prototype (a node id is user input). */
export function own<T>(record: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export function without<T>(record: Record<string, T>, keys: Iterable<string>): Record<string, T> {
  const drop = new Set(keys);
  return Object.fromEntries(Object.entries(record).filter(([k]) => !drop.has(k)));
}

export const findNode = (state: Pick<FlowState, 'nodes'>, nodeId: string) => state.nodes.find((n) => n.id === nodeId);
export const findEdge = (state: Pick<FlowState, 'edges'>, edgeId: string) => state.edges.find((e) => e.id === edgeId);
export const nodeTriggerOf = (state: FlowState, nodeId: string): TriggerSettings => own(state.nodeTriggers, nodeId) ?? DEFAULT_TRIGGER;
export const historyOf = (state: FlowState, nodeId: string): HistoryEntry[] => own(state.history, nodeId) ?? [];

export interface NodePatch {
  type?: string;
  position?: Position;
  /** Top-level keys replace the node's; a key set to null stays, as null. Nested objects are not merged. */
  data?: Record<string, unknown>;
}

/** The one merge rule for NodeUpdated; projections apply it too, so both agree. */
export function applyNodePatch(node: FlowNode, patch: NodePatch): FlowNode {
  return {
    id: node.id,
    type: patch.type ?? node.type,
    position: patch.position ?? node.position,
    data: patch.data ? ({ ...node.data, ...patch.data } as NodeData) : node.data,
  };
}

/** The one bounding rule for history: keep the newest MAX_HISTORY_ENTRIES_PER_NODE. Projections apply it too. */
export function appendHistoryEntry(entries: readonly HistoryEntry[], entry: HistoryEntry): HistoryEntry[] {
  const next = [...entries, entry];
  return next.length > MAX_HISTORY_ENTRIES_PER_NODE ? next.slice(next.length - MAX_HISTORY_ENTRIES_PER_NODE) : next;
}

/** Who may see a flow: its org's workspace, or (personal flows) only its owner in no organization. */
export interface FlowScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

export function isVisibleTo(flow: Pick<FlowState, 'ownerId' | 'orgId' | 'workspaceId'>, scope: FlowScope): boolean {
  if (flow.orgId !== scope.orgId || flow.workspaceId !== scope.workspaceId) return false;
  return flow.orgId !== null || flow.ownerId === scope.userId;
}

// ---------------------------------------------------------------- evolve

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
    case 'FlowMcpExposureSet': {
      const { enabled, toolName, description, inputSchema, at } = event.data;
      return { ...state, mcp: { enabled, toolName, description, inputSchema, at }, updatedAt: at };
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
    // Same values, another form: not an edit, so updatedAt stays.
    case 'FlowSecretsResealed': {
      const patches = new Map(event.data.nodes.map((n) => [n.nodeId, n.data]));
      return { ...state, nodes: state.nodes.map((n) => (patches.has(n.id) ? applyNodePatch(n, { data: patches.get(n.id) }) : n)) };
    }
    default:
      return state;
  }
}
