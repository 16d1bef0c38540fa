import { fold } from '../shared/decider.js';
import type { FlowEdge, FlowEvent, FlowNode, TriggerMethod } from './events.js';
import { maskNodeSecrets } from './secrets.js';
import { evolveFlow, initialFlowState, type FlowState, type TriggerSettings } from './state.js';

/** A trigger as clients see it: whether a key exists, never its hash. */
export interface TriggerView {
  enabled: boolean;
  allowedMethods: TriggerMethod[];
  inputSchema: Record<string, unknown> | null;
  hasKey: boolean;
  keyCreatedAt: string | null;
}

export const toTriggerView = (t: TriggerSettings): TriggerView => ({
  enabled: t.enabled,
  allowedMethods: t.allowedMethods,
  inputSchema: t.inputSchema,
  hasKey: t.keyHash !== null,
  keyCreatedAt: t.keyCreatedAt,
});

/** The public JSON of a flow (GET /flows/{id}, versions/{n}); history and key hashes stay out, node secrets are masked. */
export interface FlowView {
  id: string;
  name: string;
  description: string;
  archived: boolean;
  /** Stream revision of the flow's last event: what ETag and If-Match carry. */
  version: number;
  createdAt: string;
  updatedAt: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  nodes: FlowNode[];
  edges: FlowEdge[];
  trigger: TriggerView;
}

/** The flow's own fields that every view of it carries (public view, read-model document, list item). */
export type FlowHeader = Pick<FlowView, 'name' | 'description' | 'archived' | 'version' | 'createdAt' | 'updatedAt' | 'ownerId' | 'orgId' | 'workspaceId'>;

export const flowHeaderOf = (f: FlowHeader): FlowHeader => ({
  name: f.name,
  description: f.description,
  archived: f.archived,
  version: f.version,
  createdAt: f.createdAt,
  updatedAt: f.updatedAt,
  ownerId: f.ownerId,
  orgId: f.orgId,
  workspaceId: f.workspaceId,
});

export function toFlowView(state: FlowState): FlowView {
  return { id: state.id, ...flowHeaderOf(state), nodes: maskNodes(state.nodes), edges: state.edges, trigger: toTriggerView(state.trigger) };
}

/** Nodes as every read shows them: header values and `$secret` variables masked (secrets.ts). */
export const maskNodes = (nodes: readonly FlowNode[]): FlowNode[] => nodes.map((n) => ({ ...n, data: maskNodeSecrets(n.data) }));

/** Anything with a type and data: domain events, or recorded events straight from the store. */
type FoldableEvent = { type: string; data: unknown };

/** The state after all the given events, in order (the first one is revision 0). */
export function foldFlow(events: Iterable<FoldableEvent>): FlowState {
  return fold(evolveFlow, initialFlowState, events as Iterable<FlowEvent>);
}

/**
 * The flow as it stood right after the event of revision `version` (the first `version + 1`
 * events), for `GET /flows/{id}/versions/{version}`. Null when the stream is not that long.
 * The state may be `deleted` (the version that deleted it) — the route decides what to answer.
 */
export function flowAtVersion(events: readonly FoldableEvent[], version: number): FlowState | null {
  if (!Number.isInteger(version) || version < 0 || version >= events.length) return null;
  return foldFlow(events.slice(0, version + 1));
}
