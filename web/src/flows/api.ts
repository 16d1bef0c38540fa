import type { ResponseBody } from '../../../client/index';
import { api, call } from '../session';

/** The shapes the flows area reads, named after the operations that answer them. */
export type Flow = ResponseBody<'getFlow', 200>['flow'];
export type FlowSummary = ResponseBody<'listFlows', 200>['items'][number];
export type ApiNode = Flow['nodes'][number];
export type ApiEdge = Flow['edges'][number];
export type TriggerView = Flow['trigger'];

export interface NodeTypeInfo {
  nodeType: string;
  label: string;
  description: string;
  dataSchema: JsonSchema;
}

/** The part of JSON Schema (draft 2020-12, as zod writes it) the settings form understands. */
export interface JsonSchema {
  type?: string;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
}

export interface AuditEvent {
  revision: number;
  type: string;
  at: string;
  actorId: string | null;
  data: unknown;
}

export async function getFlow(flowId: string): Promise<Flow> {
  return (await call(api().GET('/flows/{flowId}', { params: { path: { flowId } } }))).flow;
}

export async function listNodeTypes(): Promise<NodeTypeInfo[]> {
  const body = await call(api().GET('/node-types'));
  return body.nodeTypes as NodeTypeInfo[];
}

/** The flow as it stood right after revision `version` (read-only: rebuilt from the log). */
export async function flowAtVersion(flowId: string, version: number): Promise<Flow> {
  const body = await call(api().GET('/flows/{flowId}/versions/{version}', { params: { path: { flowId, version: String(version) } } }));
  return body.flow as unknown as Flow;
}

/** The audit event that made `version` (the log is read newest first from that revision). */
export async function eventOfVersion(flowId: string, version: number): Promise<AuditEvent | null> {
  const body = await call(api().GET('/flows/{flowId}/events', { params: { path: { flowId }, query: { cursor: String(version), limit: 1, order: 'desc' } } }));
  const item = body.items[0] as AuditEvent | undefined;
  return item && item.revision === version ? item : null;
}

/** Events that change what the canvas shows; trigger, key, archive and history events do not. */
const EDITS = /^(FlowReplaced|FlowRenamed|Node(Added|Updated|Deleted)|Connection(Added|Updated|Removed))$/;

/**
 * The version just before the last edit of the definition: what Undo restores. A trigger key made
 * after the edit is skipped over, so Undo never "undoes" to the same graph.
 */
export async function versionBeforeLastEdit(flowId: string, current: number): Promise<number> {
  const body = await call(api().GET('/flows/{flowId}/events', { params: { path: { flowId }, query: { limit: 100, order: 'desc' } } }));
  const edit = (body.items as AuditEvent[]).find((e) => EDITS.test(e.type) && e.revision > 0);
  return edit ? edit.revision - 1 : Math.max(0, current - 1);
}

export async function restoreVersion(flowId: string, version: number): Promise<Flow> {
  return (await call(api().POST('/flows/{flowId}/versions/{version}/restore', { params: { path: { flowId, version: String(version) } } }))).flow;
}

/** The version an answer's ETag names (`"7"` → 7), or null. */
export function versionOfEtag(response: Response): number | null {
  const match = /^(?:W\/)?"(\d+)"$/.exec(response.headers.get('etag') ?? '');
  return match ? Number(match[1]) : null;
}
