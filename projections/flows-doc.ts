import {
  flowHeaderOf,
  initialFlowState,
  maskNodes,
  toTriggerView,
  type FlowEdge,
  type FlowNode,
  type FlowState,
  type FlowView,
  type HistoryEntry,
  type McpExposure,
  type TriggerSettings,
  type TriggerView,
} from '../domain/flows/index.js';
import type { Doc } from '../ports/read-store.js';

/**
 * How a flow is stored in the `flows` collection, and back.
 *
 * The fields lists filter and sort on (owner, tenant, archived, updatedAt…) are plain document
 * fields. Everything a user typed freely — nodes, edges, trigger input schemas — is kept as one
 * JSON text (`definition`): node `data` is arbitrary JSON, and FerretDB v1.24 refuses keys that
 * start with `$` (`"$schema"` in any JSON Schema) or contain `.`, and arrays nested in arrays
 * (`variables: {m: [[1]]}`). A projector that throws on such input would stop the whole read
 * model, so nothing user-shaped ever becomes a field name Mongo interprets. It is also faster:
 * one string to copy instead of a deep document.
 */
/** `version` is the stream revision of the last projected event: the flow's public version and the redelivery guard. */
export interface FlowDoc extends Doc, Omit<FlowSummary, 'id'> {
  /** A deleted flow stays as a tombstone (so a redelivered older event cannot resurrect it); queries skip it. */
  deleted: boolean;
  /** JSON of {@link FlowDefinition}: the rest of the public view, so a GET can answer it without parsing. */
  definition: string;
  /** JSON of the per-node trigger views (`Record<nodeId, TriggerView>`); node ids stay out of field names. */
  nodeTriggers: string;
  /**
   * True on every document written since node secrets are masked in the read model; a document
   * without it (projected by an older version) is masked when read, until its flow's next event.
   */
  secretsMasked?: true;
  /**
   * The tool name while the flow is exposed on the service's MCP server (`/api/mcp`), else null:
   * the field the tool listing filters on. Absent on documents projected before it existed.
   */
  mcpTool?: string | null;
  /** JSON of the flow's {@link McpExposure} (null: never set); JSON text because its input schema is user-shaped. */
  mcp?: string | null;
}

/** The part of a flow's public view kept as JSON text; trigger views carry `hasKey`, never a hash. */
export interface FlowDefinition {
  nodes: FlowNode[];
  edges: FlowEdge[];
  trigger: TriggerView;
}

/** What `getFlow` answers: the public view plus per-node trigger settings (no key hashes, no history). */
export interface FlowRecord extends FlowView {
  /** Same as `id`, for callers that read the document shape. */
  _id: string;
  deleted: false;
  /** Only nodes whose trigger was ever configured; others use the default (off, POST, no key). */
  nodeTriggers: Record<string, TriggerView>;
}

/** The list item of `GET /flows`: the flow without its graph. */
export interface FlowSummary extends Omit<FlowView, 'nodes' | 'edges' | 'trigger'> {
  nodeCount: number;
  edgeCount: number;
}

/** Stands in for a key hash the flows document does not hold (it lives in `trigger_keys`). */
const HASH_ELSEWHERE = 'stored-in-trigger_keys';

const settingsOf = (view: TriggerView): TriggerSettings => ({
  enabled: view.enabled,
  allowedMethods: view.allowedMethods,
  inputSchema: view.inputSchema,
  keyHash: view.hasKey ? HASH_ELSEWHERE : null,
  keyCreatedAt: view.keyCreatedAt,
});

export function docOf(state: FlowState): FlowDoc {
  const definition: FlowDefinition = state.deleted
    ? { nodes: [], edges: [], trigger: toTriggerView(initialFlowState.trigger) }
    : { nodes: maskNodes(state.nodes), edges: state.edges, trigger: toTriggerView(state.trigger) };
  const nodeTriggers = state.deleted ? {} : Object.fromEntries(Object.entries(state.nodeTriggers).map(([id, t]) => [id, toTriggerView(t)]));
  return {
    _id: state.id,
    ...flowHeaderOf(state),
    deleted: state.deleted,
    nodeCount: definition.nodes.length,
    edgeCount: definition.edges.length,
    definition: JSON.stringify(definition),
    nodeTriggers: JSON.stringify(nodeTriggers),
    secretsMasked: true,
    mcpTool: !state.deleted && state.mcp?.enabled ? state.mcp.toolName : null,
    mcp: state.deleted || !state.mcp ? null : JSON.stringify(state.mcp),
  };
}

/** The stored definition, masked if an older version projected it in clear. */
function definitionOf(doc: FlowDoc): FlowDefinition {
  const d = JSON.parse(doc.definition) as FlowDefinition;
  return doc.secretsMasked ? d : { ...d, nodes: maskNodes(d.nodes) };
}

/** The aggregate state the document stands for, minus history (kept in `node_history`). */
export function stateOf(doc: FlowDoc): FlowState {
  const d = definitionOf(doc);
  const nodeTriggers = JSON.parse(doc.nodeTriggers) as Record<string, TriggerView>;
  return {
    exists: true,
    deleted: doc.deleted,
    id: doc._id,
    name: doc.name,
    description: doc.description,
    archived: doc.archived,
    ownerId: doc.ownerId,
    orgId: doc.orgId,
    workspaceId: doc.workspaceId,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    version: doc.version,
    nodes: d.nodes,
    edges: d.edges,
    trigger: settingsOf(d.trigger),
    nodeTriggers: Object.fromEntries(Object.entries(nodeTriggers).map(([id, t]) => [id, settingsOf(t)])),
    history: {},
    mcp: mcpOf(doc),
  };
}

/** The flow's MCP exposure as stored (null: never set). */
export const mcpOf = (doc: FlowDoc): McpExposure | null => (doc.mcp ? (JSON.parse(doc.mcp) as McpExposure) : null);

export function recordOf(doc: FlowDoc): FlowRecord {
  const d = definitionOf(doc);
  const nodeTriggers = JSON.parse(doc.nodeTriggers) as Record<string, TriggerView>;
  return { _id: doc._id, deleted: false, ...summaryFields(doc), nodes: d.nodes, edges: d.edges, trigger: d.trigger, nodeTriggers };
}

/**
 * The public view (`toFlowView`) as JSON text, composed from the stored strings without parsing
 * the graph: the hot path of `GET /flows/{id}` (a 500-node flow is ~100 KiB of JSON).
 */
export function viewJsonOf(doc: FlowDoc): string {
  const head = JSON.stringify(summaryFields(doc));
  const definition = doc.secretsMasked ? doc.definition : JSON.stringify(definitionOf(doc));
  return `${head.slice(0, -1)},${definition.slice(1)}`;
}

function summaryFields(doc: FlowDoc) {
  return { id: doc._id, ...flowHeaderOf(doc) };
}

export const summaryOf = (doc: FlowDoc): FlowSummary => ({ ...summaryFields(doc), nodeCount: doc.nodeCount, edgeCount: doc.edgeCount });

/** The public JSON of a flow (exactly `toFlowView` of the aggregate), from what `getFlow` answered. */
export function flowViewOf(record: FlowRecord): FlowView {
  const { id, name, description, archived, version, createdAt, updatedAt, ownerId, orgId, workspaceId, nodes, edges, trigger } = record;
  return { id, name, description, archived, version, createdAt, updatedAt, ownerId, orgId, workspaceId, nodes, edges, trigger };
}

/** One history entry; `entry` is JSON text for the same reason as `FlowDoc.definition` (outputs are any JSON). */
export interface HistoryDoc extends Doc {
  flowId: string;
  nodeId: string;
  entryId: string;
  /** Stream revision of the NodeExecutionRecorded event: orders entries (newest = highest). */
  seq: number;
  at: string;
  entry: string;
}

/**
 * `${flowId}:${nodeId}:${entryId}`; node ids may contain `:` and entry ids anything, so those two
 * parts are URI-encoded (which leaves the usual ids unchanged) to keep the key unambiguous.
 */
export const historyDocId = (flowId: string, nodeId: string, entryId: string) => `${flowId}:${encodeURIComponent(nodeId)}:${encodeURIComponent(entryId)}`;

export const historyEntryOf = (doc: HistoryDoc): HistoryEntry => JSON.parse(doc.entry) as HistoryEntry;

export interface TriggerKeyDoc extends Doc {
  flowId: string;
  nodeId: string | null;
  keyHash: string;
}

/** The flow's key is `_id: flowId`; a node's `${flowId}:${nodeId}` (flow ids never contain `:`). */
export const triggerKeyId = (flowId: string, nodeId: string | null) => (nodeId === null ? flowId : `${flowId}:${nodeId}`);
