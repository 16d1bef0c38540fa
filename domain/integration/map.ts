import type { RecordedEvent } from '../shared/events.js';
import { categoryOf } from '../shared/events.js';
import { dataschemaOf, FORBIDDEN_FIELD, MAX_INLINE_BYTES, type IntegrationData, type IntegrationEvent, type IntegrationEventType } from './events.js';

/**
 * Internal domain events → public integration events (pure). Every field is picked by name;
 * internal data is never spread, so a field added to an internal event stays private until it is
 * added here and to the contract. Events of other categories, and internal events of these
 * categories that have no public meaning (keys, secrets, history, timers, …), map to nothing.
 */

/** Whose stream it is, read from its first event (FlowCreated, RunRequested, WorkflowCreated, or a pruned run's summary). */
export interface StreamOrigin {
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** The flow of a run or workflow; the flow itself for a flow stream; '' for a collection. */
  flowId: string;
  /** The collection of a document stream (or of the collection's own stream). */
  collection?: { id: string; name: string };
  /** A webhook delivery's scheduling (its stream's first event); the tenant is its session's. */
  delivery?: { sessionId: string; webhookId: string; eventType: string };
}

/** The categories whose events can become public. */
export const INTEGRATION_CATEGORIES = ['flow', 'run', 'workflow', 'collection', 'document', 'msgdelivery'] as const;

/** The stream whose first event names a stream's origin: a document's is its collection's (`document-<collectionId>.<documentId>`). */
export function originStreamOf(streamId: string): string {
  if (categoryOf(streamId) !== 'document') return streamId;
  const key = streamId.slice('document-'.length);
  const dot = key.indexOf('.');
  return `collection-${dot === -1 ? key : key.slice(0, dot)}`;
}

type Data = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A machine-readable code (UPPER_SNAKE) passes; anything else (free text could quote user data) becomes `fallback`. */
const codeOr = (v: unknown, fallback: string): string => (typeof v === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(v) ? v : fallback);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * A stream whose first event holds only part of its origin: a webhook delivery names its session,
 * whose first event (MessagingSessionInitialized) holds the owner. Null for other streams.
 */
export function originHop(first: RecordedEvent): { stream: string; delivery: NonNullable<StreamOrigin['delivery']> } | null {
  if (first.type !== 'WebhookDeliveryScheduled') return null;
  const d = first.data as Data;
  const sessionId = str(d.sessionId);
  return sessionId ? { stream: `msgsession-${sessionId}`, delivery: { sessionId, webhookId: str(d.webhookId), eventType: str(d.eventType) } } : null;
}

/** The origin a stream's first event names; null when the event is not a first event we know. */
export function originOf(first: RecordedEvent): StreamOrigin | null {
  const d = first.data as Data;
  const summary = first.type === 'RunHistoryPruned' ? (d.summary as Data | undefined) : undefined;
  const source = first.type === 'FlowCreated' || first.type === 'RunRequested' || first.type === 'WorkflowCreated' || first.type === 'CollectionCreated' || first.type === 'MessagingSessionInitialized' ? d : summary;
  if (!source || typeof source.ownerId !== 'string') return null;
  const origin: StreamOrigin = { ownerId: source.ownerId, orgId: strOrNull(source.orgId), workspaceId: strOrNull(source.workspaceId), flowId: str(source.flowId) };
  if (first.type === 'CollectionCreated') origin.collection = { id: str(d.collectionId), name: str(d.name) };
  return origin;
}

/** The tenant of an origin: its organization, else its owner. Only the characters of a legal Kafka topic name survive. */
export function tenantOf(origin: Pick<StreamOrigin, 'ownerId' | 'orgId'>): string {
  const safe = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 180);
  return origin.orgId ? `org.${safe(origin.orgId)}` : `user.${safe(origin.ownerId)}`;
}

/** Whether any key of a JSON value, at any depth, is named like a secret. */
export function hasForbiddenKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasForbiddenKey);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => FORBIDDEN_FIELD.test(k) || hasForbiddenKey(v));
}

/** A value by reference, inline only when its JSON is small and no key of it is named like a secret. */
export function bounded(ref: string, value: unknown) {
  const json = JSON.stringify(value ?? null) ?? 'null';
  const bytes = new TextEncoder().encode(json).length;
  const inline = bytes <= MAX_INLINE_BYTES && !hasForbiddenKey(value);
  return { ref, bytes, inline, value: inline ? (value ?? null) : null };
}

function usageOf(v: unknown) {
  const u = (v ?? {}) as Data;
  return { total: num(u.total_tokens), costUsd: num(u.cost) };
}

const FLOW_CHANGE_OF: Record<string, IntegrationData<'flowsvc.flow.changed.v1'>['change']> = {
  FlowReplaced: 'replaced',
  FlowRenamed: 'renamed',
  FlowArchived: 'archived',
  FlowUnarchived: 'unarchived',
  NodeAdded: 'node_added',
  NodeUpdated: 'node_updated',
  NodeDeleted: 'node_deleted',
  ConnectionAdded: 'connection_added',
  ConnectionUpdated: 'connection_updated',
  ConnectionRemoved: 'connection_removed',
  FlowTriggerUpdated: 'trigger_updated',
  NodeTriggerUpdated: 'trigger_updated',
};

const WORKFLOW_STATUS_OF: Record<string, IntegrationData<'flowsvc.workflow.status_changed.v1'>['status']> = {
  WorkflowCreated: 'created',
  WorkflowStarted: 'running',
  WorkflowResumed: 'running',
  WorkflowPaused: 'paused',
  WorkflowCompleted: 'completed',
  WorkflowFailed: 'failed',
  WorkflowCanceled: 'canceled',
  WorkflowTerminated: 'terminated',
  WorkflowTimedOut: 'timed_out',
  WorkflowContinuedAsNew: 'continued_as_new',
};

const DOCUMENT_CHANGE_OF: Record<string, IntegrationData<'flowsvc.document.changed.v1'>['change']> = {
  DocumentAdded: 'added',
  DocumentChanged: 'changed',
  DocumentRemoved: 'removed',
  DocumentInserted: 'added',
  DocumentUpdated: 'changed',
  DocumentDeleted: 'removed',
};

/** The public data of one internal event, or null. */
function publicData(e: RecordedEvent, origin: StreamOrigin): { type: IntegrationEventType; subject: string; data: IntegrationData<IntegrationEventType> } | null {
  const d = (e.data ?? {}) as Data;
  const category = categoryOf(e.streamId);
  const streamKey = e.streamId.slice(category.length + 1);
  const time = str(d.at) || e.metadata.occurredAt;
  const tenancy = { ownerId: origin.ownerId, orgId: origin.orgId, workspaceId: origin.workspaceId };
  if (category === 'flow') {
    const subject = `flows/${streamKey}`;
    if (e.type === 'FlowCreated') {
      const data = { flowId: streamKey, name: str(d.name), version: e.revision, nodeCount: Array.isArray(d.nodes) ? d.nodes.length : 0, edgeCount: Array.isArray(d.edges) ? d.edges.length : 0, ...tenancy, at: str(d.createdAt) || time };
      return { type: 'flowsvc.flow.created.v1', subject, data };
    }
    if (e.type === 'FlowDeleted') return { type: 'flowsvc.flow.deleted.v1', subject, data: { flowId: streamKey, version: e.revision, at: time } };
    const change = FLOW_CHANGE_OF[e.type];
    if (!change) return null;
    const name = e.type === 'FlowReplaced' || e.type === 'FlowRenamed' ? str(d.name) : null;
    const node = d.node as Data | undefined;
    const nodeId = strOrNull(d.nodeId) ?? (e.type === 'NodeAdded' ? strOrNull(node?.id) : null);
    return { type: 'flowsvc.flow.changed.v1', subject, data: { flowId: streamKey, change, version: e.revision, name, nodeId, at: time } };
  }
  if (category === 'run') {
    const subject = `runs/${streamKey}`;
    const run = { processId: streamKey, flowId: origin.flowId };
    switch (e.type) {
      case 'RunRequested':
        return {
          type: 'flowsvc.run.requested.v1',
          subject,
          data: { ...run, flowVersion: num(d.flowVersion), mode: d.mode === 'node' ? 'node' : 'flow', nodeId: strOrNull(d.nodeId), source: str(d.source), ...tenancy, at: time },
        };
      case 'RunStarted':
        return { type: 'flowsvc.run.started.v1', subject, data: { ...run, at: time } };
      case 'NodeCompleted': {
        const nodeId = str(d.nodeId);
        const output = bounded(`/processes/${streamKey}`, d.output);
        return { type: 'flowsvc.run.node_completed.v1', subject, data: { ...run, nodeId, attempt: Math.max(1, num(d.attempt)), executionTimeMs: num(d.executionTime), usage: usageOf(d.usage), output, at: time } };
      }
      case 'RunCompleted':
        return { type: 'flowsvc.run.completed.v1', subject, data: { ...run, usage: usageOf(d.usage), outputs: bounded(`/processes/${streamKey}`, d.outputs), at: time } };
      case 'RunFailed':
        return { type: 'flowsvc.run.failed.v1', subject, data: { ...run, status: 'failed', code: codeOr(d.code, 'RUN_FAILED'), nodeId: strOrNull(d.nodeId), usage: usageOf(d.usage), at: time } };
      case 'RunStopped':
        return { type: 'flowsvc.run.failed.v1', subject, data: { ...run, status: 'stopped', code: 'STOPPED', nodeId: null, usage: usageOf(d.usage), at: time } };
      case 'RunTimedOut':
        return { type: 'flowsvc.run.failed.v1', subject, data: { ...run, status: 'timed_out', code: 'TIMEOUT', nodeId: null, usage: usageOf(d.usage), at: time } };
      default:
        return null;
    }
  }
  if ((category === 'collection' || category === 'document') && origin.collection) {
    const change = DOCUMENT_CHANGE_OF[e.type];
    const documentId = str(d.documentId);
    if (!change || !documentId) return null;
    const { id: collectionId, name: collection } = origin.collection;
    // Document streams carry the document's revision; legacy collection-stream writes have the stream's.
    const revision = typeof d.revision === 'number' ? d.revision : e.revision;
    return {
      type: 'flowsvc.document.changed.v1',
      subject: `documents/${collectionId}/${documentId}`,
      data: {
        collectionId, collection, documentId, change, revision, bytes: change === 'removed' ? 0 : num(d.size),
        ref: `/db/collections/${encodeURIComponent(collection)}/documents/${encodeURIComponent(documentId)}`, ...tenancy, at: time,
      },
    };
  }
  if (category === 'msgdelivery' && origin.delivery) {
    const final = e.type === 'WebhookDeliveryCancelled' ? 'cancelled' : e.type === 'WebhookDeliveryAttempted' && (d.outcome === 'succeeded' || d.outcome === 'failed') ? d.outcome : null;
    if (!final) return null;
    return {
      type: 'flowsvc.webhook.delivery_completed.v1',
      subject: `webhook-deliveries/${streamKey}`,
      data: {
        deliveryId: streamKey, ...origin.delivery, outcome: final, attempts: num(d.attempt),
        statusCode: typeof d.statusCode === 'number' ? d.statusCode : null,
        errorCode: final === 'cancelled' ? codeOr(d.reason, 'CANCELLED') : d.error == null ? null : codeOr(d.error, 'DELIVERY_FAILED'), ...tenancy, at: time,
      },
    };
  }
  if (category === 'workflow') {
    const status = WORKFLOW_STATUS_OF[e.type];
    if (!status) return null;
    return {
      type: 'flowsvc.workflow.status_changed.v1',
      subject: `workflows/${streamKey}`,
      data: { workflowId: streamKey, execution: Math.max(1, num(d.execution) || 1), flowId: origin.flowId, status, code: e.type === 'WorkflowFailed' ? codeOr(d.code, 'WORKFLOW_FAILED') : null, at: time },
    };
  }
  return null;
}

/**
 * The public events of one recorded event, given its stream's origin (null: the stream's origin
 * is unknown, so nothing is published). Pure; the same input gives the same ids, so a redelivered
 * internal event yields the same CloudEvents `id`s and subscribers can de-duplicate.
 */
export function toIntegrationEvents(recorded: RecordedEvent, origin: StreamOrigin | null): IntegrationEvent[] {
  if (!origin) return [];
  const mapped = publicData(recorded, origin);
  if (!mapped) return [];
  const time = str((mapped.data as Data).at) || recorded.metadata.occurredAt;
  return [{ id: recorded.id, type: mapped.type, subject: mapped.subject, time, tenant: tenantOf(origin), dataschema: dataschemaOf(mapped.type), data: mapped.data }];
}

/** Whether an internal event type can become public at all (so the consumer skips the rest without reading its stream). */
export function mayBePublic(recorded: Pick<RecordedEvent, 'type'>): boolean {
  return PUBLIC_SOURCES.has(recorded.type);
}
const PUBLIC_SOURCES: ReadonlySet<string> = new Set([
  'FlowCreated', 'FlowDeleted', ...Object.keys(FLOW_CHANGE_OF),
  'RunRequested', 'RunStarted', 'NodeCompleted', 'RunCompleted', 'RunFailed', 'RunStopped', 'RunTimedOut',
  ...Object.keys(WORKFLOW_STATUS_OF),
  ...Object.keys(DOCUMENT_CHANGE_OF),
  'WebhookDeliveryAttempted', 'WebhookDeliveryCancelled',
]);
