import { evolveFlow, initialFlowState, isVisibleTo, MAX_HISTORY_ENTRIES_PER_NODE, type FlowEvent, type FlowScope, type FlowState, type HistoryEntry } from '../domain/flows/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Page, ReadStore } from '../ports/read-store.js';
import {
  docOf,
  mcpOf,
  historyDocId,
  historyEntryOf,
  recordOf,
  stateOf,
  summaryOf,
  triggerKeyId,
  viewJsonOf,
  type FlowDoc,
  type FlowRecord,
  type FlowSummary,
  type HistoryDoc,
  type TriggerKeyDoc,
} from './flows-doc.js';
import { type Projector, ownedCollections } from './projector.js';

export { flowViewOf, type FlowRecord, type FlowSummary } from './flows-doc.js';

export const FLOWS = 'flows';
export const TRIGGER_KEYS = 'trigger_keys';
export const NODE_HISTORY = 'node_history';
const STREAM_PREFIX = 'flow-';

/**
 * The flow read model: one `flows` document per flow, kept by applying the domain's own
 * `evolveFlow` to the stored state, so it agrees with the aggregate by construction; key hashes in
 * `trigger_keys`, node history in `node_history`.
 *
 * Idempotence: an event whose revision is not above the stored `version` was projected already
 * and is skipped. The side collections are written before the flows document (whose version is the
 * guard), and each of their writes is idempotent on its own, so a crash between the two only means
 * the event is applied again, with the same result.
 */
export const flowsProjector: Projector = {
  name: 'flows',
  categories: ['flow'],
  ...ownedCollections({
    // The list query: personal flows by owner, org flows by workspace; both newest first.
    [FLOWS]: [
      { keys: { ownerId: 1, orgId: 1, workspaceId: 1, deleted: 1, archived: 1, updatedAt: -1 }, name: 'flows_by_owner' },
      { keys: { orgId: 1, workspaceId: 1, deleted: 1, archived: 1, updatedAt: -1 }, name: 'flows_by_workspace' },
      // The MCP server's tool listing (/api/mcp): the exposed flows of one tenant.
      { keys: { orgId: 1, workspaceId: 1, mcpTool: 1 }, name: 'flows_by_mcp_tool' },
    ],
    [TRIGGER_KEYS]: [{ keys: { flowId: 1 }, name: 'trigger_keys_by_flow' }],
    [NODE_HISTORY]: [{ keys: { flowId: 1, nodeId: 1, seq: -1 }, name: 'node_history_by_node' }],
  }),
  async project(recorded, store) {
    const flowId = recorded.streamId.slice(STREAM_PREFIX.length);
    const flows = store.collection<FlowDoc>(FLOWS);
    const doc = await flows.findOne({ _id: flowId });
    if (doc && recorded.revision <= doc.version) return;
    // Every stream starts with FlowCreated; anything else without a document has nothing to apply to.
    if (!doc && recorded.type !== 'FlowCreated') return;
    const before = doc ? stateOf(doc) : undefined;
    const event = recorded as unknown as FlowEvent;
    const after: FlowState = { ...evolveFlow(before ?? initialFlowState, event), version: recorded.revision };
    await projectSideCollections(store, flowId, event, recorded, before, after);
    await flows.replaceOne({ _id: flowId }, docOf(after), { upsert: true });
  },
};

export const flowProjectors: Projector[] = [flowsProjector];

async function projectSideCollections(store: ReadStore, flowId: string, event: FlowEvent, recorded: RecordedEvent, before: FlowState | undefined, after: FlowState) {
  const keys = store.collection<TriggerKeyDoc>(TRIGGER_KEYS);
  const history = store.collection<HistoryDoc>(NODE_HISTORY);
  switch (event.type) {
    case 'FlowTriggerKeyRegenerated':
    case 'NodeTriggerKeyRegenerated': {
      const nodeId = event.type === 'NodeTriggerKeyRegenerated' ? event.data.nodeId : null;
      const _id = triggerKeyId(flowId, nodeId);
      await keys.replaceOne({ _id }, { _id, flowId, nodeId, keyHash: event.data.keyHash }, { upsert: true });
      return;
    }
    case 'NodeDeleted':
      await forgetNodes(store, flowId, [event.data.nodeId]);
      return;
    case 'FlowReplaced': {
      const kept = new Set(after.nodes.map((n) => n.id));
      const gone = (before?.nodes ?? []).map((n) => n.id).filter((id) => !kept.has(id));
      if (gone.length > 0) await forgetNodes(store, flowId, gone);
      return;
    }
    case 'FlowDeleted':
      await keys.deleteMany({ flowId });
      await history.deleteMany({ flowId });
      return;
    case 'NodeExecutionRecorded': {
      const { nodeId, entry } = event.data;
      const _id = historyDocId(flowId, nodeId, entry.entryId);
      await history.replaceOne({ _id }, { _id, flowId, nodeId, entryId: entry.entryId, seq: recorded.revision, at: entry.at, entry: JSON.stringify(entry) }, { upsert: true });
      // The same bound as the aggregate (appendHistoryEntry): the newest entries per node stay.
      const older = await history.find({ flowId, nodeId }, { sort: { seq: -1 }, skip: MAX_HISTORY_ENTRIES_PER_NODE, projection: { _id: 1 } });
      if (older.length > 0) await history.deleteMany({ _id: { $in: older.map((d) => d._id) } });
      return;
    }
    case 'NodeHistoryEntryDeleted':
      await history.deleteOne({ _id: historyDocId(flowId, event.data.nodeId, event.data.entryId) });
      return;
    case 'NodeHistoryCleared':
      await history.deleteMany({ flowId, nodeId: event.data.nodeId });
      return;
    case 'FlowHistoryCleared':
      await history.deleteMany({ flowId });
      return;
    default:
      return;
  }
}

/** A node that left the flow takes its trigger key and its history with it (as in the aggregate). */
async function forgetNodes(store: ReadStore, flowId: string, nodeIds: string[]) {
  await store.collection(TRIGGER_KEYS).deleteMany({ _id: { $in: nodeIds.map((id) => triggerKeyId(flowId, id)) } });
  await store.collection(NODE_HISTORY).deleteMany({ flowId, nodeId: { $in: nodeIds } });
}

// ---------------------------------------------------------------- queries

/**
 * The flow as the read model has it, or null when it does not exist, was deleted, or is outside
 * `scope` (another tenant's flow is indistinguishable from a missing one). `scope: null` is for
 * system callers that act for nobody in particular (the public trigger middleware, run consumers).
 */
export async function getFlow(store: ReadStore, flowId: string, scope: FlowScope | null): Promise<FlowRecord | null> {
  const doc = await store.collection<FlowDoc>(FLOWS).findOne({ _id: flowId });
  if (!doc || doc.deleted) return null;
  if (scope && !isVisibleTo(doc, scope)) return null;
  return recordOf(doc);
}

/**
 * Like getFlow, but the public view (exactly `toFlowView` of the aggregate) as JSON text and the
 * version, without parsing the graph: for routes that only pass the flow on.
 */
export async function getFlowJson(store: ReadStore, flowId: string, scope: FlowScope | null): Promise<{ version: number; json: string } | null> {
  const doc = await store.collection<FlowDoc>(FLOWS).findOne({ _id: flowId });
  if (!doc || doc.deleted) return null;
  if (scope && !isVisibleTo(doc, scope)) return null;
  return { version: doc.version, json: viewJsonOf(doc) };
}

export interface ListFlowsOptions {
  /** true: only archived flows; false: only active ones; absent: both. */
  archived?: boolean;
  limit: number;
  cursor?: string | null;
}

/** The flows visible in `scope`, most recently updated first (node history does not count as an update). */
export async function listFlows(store: ReadStore, scope: FlowScope, options: ListFlowsOptions): Promise<Page<FlowSummary>> {
  const filter: Record<string, unknown> = { orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false };
  // Personal flows (no organization) are their owner's alone, as in isVisibleTo.
  if (scope.orgId === null) filter.ownerId = scope.userId;
  if (options.archived !== undefined) filter.archived = options.archived;
  const page = await store
    .collection<FlowDoc>(FLOWS)
    .page(filter, { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor ?? null, projection: { definition: 0, nodeTriggers: 0 } });
  return { items: page.items.map(summaryOf), nextCursor: page.nextCursor };
}

/**
 * A node's execution history, newest first. Does not check who asks: callers check the flow with
 * `getFlow` first.
 */
export async function listNodeHistory(
  store: ReadStore,
  flowId: string,
  nodeId: string,
  options: { limit: number; cursor?: string | null },
): Promise<Page<HistoryEntry>> {
  const page = await store.collection<HistoryDoc>(NODE_HISTORY).page({ flowId, nodeId }, { sort: { seq: -1 }, limit: options.limit, cursor: options.cursor ?? null });
  return { items: page.items.map(historyEntryOf), nextCursor: page.nextCursor };
}

/** sha256 hex of the flow's (`nodeId` null) or a node's current trigger key; null when none was generated. */
export async function getTriggerKeyHash(store: ReadStore, flowId: string, nodeId: string | null): Promise<string | null> {
  const doc = await store.collection<TriggerKeyDoc>(TRIGGER_KEYS).findOne({ _id: triggerKeyId(flowId, nodeId) });
  return doc?.keyHash ?? null;
}

// ---------------------------------------------------------------- MCP tools (/api/mcp)

/** A flow exposed as an MCP tool, as the tool listing needs it. */
export interface McpToolFlow {
  flowId: string;
  name: string;
  toolName: string;
  /** The exposure's description, else the flow's (may be empty). */
  description: string;
  /** The flow trigger's declared input schema (null when none). */
  triggerInputSchema: Record<string, unknown> | null;
  /** The schema given with the exposure (null when none). */
  givenInputSchema: Record<string, unknown> | null;
}

function mcpFilter(scope: FlowScope): Record<string, unknown> {
  const filter: Record<string, unknown> = { mcpTool: { $ne: null }, orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false, archived: false };
  // Personal flows are their owner's alone, as in isVisibleTo.
  if (scope.orgId === null) filter.ownerId = scope.userId;
  return filter;
}

function mcpToolOf(doc: FlowDoc): McpToolFlow {
  const exposure = mcpOf(doc)!;
  const definition = JSON.parse(doc.definition) as { trigger?: { inputSchema?: Record<string, unknown> | null } };
  return {
    flowId: doc._id,
    name: doc.name,
    toolName: exposure.toolName,
    description: exposure.description ?? doc.description,
    triggerInputSchema: definition.trigger?.inputSchema ?? null,
    givenInputSchema: exposure.inputSchema,
  };
}

/** The tenant's exposed flows (archived flows are not tools), by tool name; at most `limit`. */
export async function listMcpToolFlows(store: ReadStore, scope: FlowScope, limit = 1000): Promise<McpToolFlow[]> {
  const docs = await store.collection<FlowDoc>(FLOWS).find(mcpFilter(scope), { sort: { mcpTool: 1 }, limit });
  return docs.map(mcpToolOf);
}

/** One exposed flow of the tenant by its tool name, or null (another tenant's tool is the same as none). */
export async function findMcpToolFlow(store: ReadStore, scope: FlowScope, toolName: string): Promise<McpToolFlow | null> {
  const [doc] = await store.collection<FlowDoc>(FLOWS).find({ ...mcpFilter(scope), mcpTool: toolName }, { limit: 1 });
  return doc ? mcpToolOf(doc) : null;
}
