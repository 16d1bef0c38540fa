import { z } from 'zod';

/**
 * The public integration events (issue 32): a curated, versioned contract for subscribers we did
 * not write, separate from the internal domain events. Each type names its major version
 * (`flowsvc.run.completed.v1`); a change that would break a consumer of a version (a field
 * removed or retyped, a field made required) is a new type with the next version, and the old one
 * keeps being published until it is retired. Fields are chosen one by one (never an internal
 * event spread), so no secret, hash, credential or personal data can reach a public topic.
 */

const at = z.string().describe('ISO 8601 time of the change');
const id = z.string().min(1);
const tenancy = {
  ownerId: id.describe('the user that owns the resource (an opaque id)'),
  orgId: id.nullable().describe('the organization that owns the resource, null for a personal one'),
  workspaceId: id.nullable(),
};

/**
 * Field names no public message may carry (the "done when" of issue 32): passwords, secrets,
 * tokens, keys and their hashes. A node's output or a run's outputs holding such a field are sent
 * by reference only, never inline.
 */
export const FORBIDDEN_FIELD = /password|secret|token|hash|apikey|api_key|credential|private_?key/i;

/** A value that may be large: its size, where to read it (an API path), and the value itself only when small. */
export const MAX_INLINE_BYTES = 1024;
const boundedValue = z
  .object({
    ref: z.string().describe('API path (under /api) where the whole value is read, with the caller\'s own credentials'),
    bytes: z.number().int().min(0).describe('size of the value as UTF-8 JSON'),
    inline: z.boolean().describe(`whether value holds the value (its JSON is at most ${MAX_INLINE_BYTES} bytes)`),
    value: z.unknown().describe('the value when inline, else null'),
  })
  .describe('a value by reference, with the value itself when small');

/** LLM usage. Named without "token", so no public field name can be mistaken for a credential. */
const usage = z.object({ total: z.number().int().min(0).describe('LLM tokens, prompt and completion'), costUsd: z.number().min(0).describe('US dollars') });

export const FLOW_CHANGES = ['replaced', 'renamed', 'archived', 'unarchived', 'node_added', 'node_updated', 'node_deleted', 'connection_added', 'connection_updated', 'connection_removed', 'trigger_updated'] as const;
export const RUN_END_STATUSES = ['failed', 'stopped', 'timed_out'] as const;
export const DOCUMENT_CHANGES = ['added', 'changed', 'removed'] as const;
export const DELIVERY_OUTCOMES = ['succeeded', 'failed', 'cancelled'] as const;
export const WORKFLOW_STATUSES = ['created', 'running', 'paused', 'completed', 'failed', 'canceled', 'terminated', 'timed_out', 'continued_as_new'] as const;

export const integrationEventSchemas = {
  'flowsvc.flow.created.v1': z.object({ flowId: id, name: z.string(), version: z.number().int().min(0), nodeCount: z.number().int().min(0), edgeCount: z.number().int().min(0), ...tenancy, at }),
  'flowsvc.flow.changed.v1': z.object({
    flowId: id,
    change: z.enum(FLOW_CHANGES),
    version: z.number().int().min(0).describe('the flow\'s version after the change (its stream revision)'),
    name: z.string().nullable().describe('the new name (replaced, renamed), else null'),
    nodeId: z.string().nullable().describe('the node changed (node_*), else null'),
    at,
  }),
  'flowsvc.flow.deleted.v1': z.object({ flowId: id, version: z.number().int().min(0), at }),
  'flowsvc.run.requested.v1': z.object({ processId: id, flowId: id, flowVersion: z.number().int().min(0), mode: z.enum(['flow', 'node']), nodeId: z.string().nullable(), source: z.string(), ...tenancy, at }),
  'flowsvc.run.started.v1': z.object({ processId: id, flowId: id, at }),
  'flowsvc.run.node_completed.v1': z.object({
    processId: id,
    flowId: id,
    nodeId: id,
    attempt: z.number().int().min(1),
    executionTimeMs: z.number().min(0),
    usage,
    output: boundedValue,
    at,
  }),
  'flowsvc.run.completed.v1': z.object({ processId: id, flowId: id, usage, outputs: boundedValue, at }),
  'flowsvc.run.failed.v1': z.object({
    processId: id,
    flowId: id,
    status: z.enum(RUN_END_STATUSES),
    code: z.string().describe('NODE_FAILED, TIMEOUT, STOPPED, …'),
    nodeId: z.string().nullable(),
    usage,
    at,
  }),
  'flowsvc.document.changed.v1': z.object({
    collectionId: id,
    collection: z.string().describe('the collection\'s name'),
    documentId: id,
    change: z.enum(DOCUMENT_CHANGES),
    revision: z.number().int().min(0).describe('the document\'s revision after the change (its ETag)'),
    bytes: z.number().int().min(0).describe('size of the document after the change, 0 once removed'),
    ref: z.string().describe('API path (under /api) of the document; its content is never in the event'),
    ...tenancy,
    at,
  }),
  'flowsvc.webhook.delivery_completed.v1': z.object({
    deliveryId: id,
    sessionId: id.describe('the messaging session whose webhook it is'),
    webhookId: id,
    eventType: z.string().describe('the session event delivered: message, message_ack, session.status'),
    outcome: z.enum(DELIVERY_OUTCOMES).describe('succeeded; failed after the last attempt; cancelled (webhook inactive or removed)'),
    attempts: z.number().int().min(0),
    statusCode: z.number().int().nullable().describe('the receiver\'s last HTTP status, null when none answered'),
    errorCode: z.string().nullable().describe('OUTBOUND_TIMEOUT, HTTP_503, WEBHOOK_INACTIVE, …; null on success'),
    ...tenancy,
    at,
  }),
  'flowsvc.workflow.status_changed.v1': z.object({ workflowId: id, execution: z.number().int().min(1), flowId: id, status: z.enum(WORKFLOW_STATUSES), code: z.string().nullable().describe('why it failed, else null'), at }),
};

export type IntegrationEventType = keyof typeof integrationEventSchemas;
export const INTEGRATION_EVENT_TYPES = Object.keys(integrationEventSchemas) as IntegrationEventType[];
export type IntegrationData<K extends IntegrationEventType> = z.infer<(typeof integrationEventSchemas)[K]>;

/**
 * One public event, as a CloudEvents 1.0 event minus `source` (the publisher's, from its
 * configuration). `tenant` is the CloudEvents extension attribute `flowsvctenant`.
 */
export interface IntegrationEvent<K extends IntegrationEventType = IntegrationEventType> {
  /** Stable across redeliveries: the internal event's id (suffixed `.<n>` past its first public event). */
  id: string;
  type: K;
  /** `flows/<flowId>`, `runs/<processId>`, `workflows/<workflowId>`, `documents/<collectionId>/<documentId>`, `webhook-deliveries/<deliveryId>`: also the Kafka key, so one resource stays in order. */
  subject: string;
  time: string;
  /** `org.<orgId>` or `user.<ownerId>`: whose topic it goes to. */
  tenant: string;
  /** The JSON Schema of `data`: a JSON pointer into GET /api/asyncapi.json. */
  dataschema: string;
  data: IntegrationData<K>;
}

export const DATASCHEMA_BASE = '/api/asyncapi.json#/components/schemas/';
export function dataschemaOf(type: IntegrationEventType): string {
  return `${DATASCHEMA_BASE}${type}`;
}
