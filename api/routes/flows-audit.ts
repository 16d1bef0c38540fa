import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { stateAtRevision } from '../../commands/snapshots.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { flowDecider, flowNotFound, flowStreamId, idSchema, isVisibleTo, maskFlowEventSecrets, toFlowView, type FlowScope } from '../../domain/flows/index.js';
import type { EventStore } from '../../ports/event-store.js';
import { defineRoute } from '../route.js';
import { flowAnswer, writeFlow } from './flows.js';
import { flowReply, writeErrors } from './flows-schemas.js';
import { MAX_PAGE_SIZE } from './pagination.js';

/**
 * Audit and replay: the only flow routes that read the event log instead of a read model (DESIGN
 * §1 allows it for exactly these). Access follows the flow's tenancy as recorded in its
 * FlowCreated event (owner, organization and workspace never change afterwards): whoever can see
 * the flow can read its history, and that stays true after the flow is deleted, because "who
 * deleted it, and what did it look like" is what an audit trail is for. Another tenant's flow, or
 * no flow at all, answers 404 FLOW_NOT_FOUND.
 */

const flowParams = z.strictObject({ flowId: idSchema });
const versionParams = z.strictObject({
  flowId: idSchema,
  version: z
    .string()
    .regex(/^\d{1,9}$/, 'must be a non-negative integer')
    .transform(Number),
});

/**
 * Newest first by default (an activity feed: what changed last is what people look for);
 * `order=asc` replays from the creation. `cursor` is the revision the next page starts at,
 * inclusive, as returned in `nextCursor`; it stays valid forever because a stream only grows.
 */
const eventsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z.string().regex(/^\d{1,9}$/, 'must be a revision (a non-negative integer) from nextCursor').optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});

const eventItemSchema = z.object({
  revision: z.number(),
  type: z.string(),
  at: z.string(),
  actorId: z.string().nullable(),
  requestId: z.string().nullable(),
  correlationId: z.string(),
  data: z.unknown(),
});

const flowViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  archived: z.boolean(),
  version: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
  ownerId: z.string(),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
  nodes: z.array(z.unknown()),
  edges: z.array(z.unknown()),
  trigger: z.object({ enabled: z.boolean(), allowedMethods: z.array(z.string()), inputSchema: z.unknown(), hasKey: z.boolean(), keyCreatedAt: z.string().nullable() }),
});

/** Key hashes are not secrets, but nobody reading an audit trail needs them: each shows as "[hash]". */
export function redactEventData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactEventData);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'keyHash' ? '[hash]' : redactEventData(v)]));
}

function toAuditItem(event: RecordedEvent) {
  return {
    revision: event.revision,
    type: event.type,
    at: event.metadata.occurredAt,
    actorId: event.metadata.actorId,
    requestId: event.metadata.requestId,
    correlationId: event.metadata.correlationId,
    // Node secrets show masked, also those of events written in clear before sealing existed.
    data: redactEventData(maskFlowEventSecrets(event.type, event.data)),
  };
}

/** 404 unless the stream starts with a FlowCreated the caller's scope can see. */
async function requireVisibleStream(store: EventStore, flowId: string, scope: FlowScope): Promise<void> {
  const [first] = await store.readStream(flowStreamId(flowId), { maxCount: 1 });
  if (!first || first.type !== 'FlowCreated') throw flowNotFound();
  const created = first.data as { ownerId: string; orgId: string | null; workspaceId: string | null };
  if (!isVisibleTo(created, scope)) throw flowNotFound();
}

/** The flow as of `version`, folded from the log; 404 VERSION_NOT_FOUND beyond the stream. */
export async function flowAtVersion(store: EventStore, flowId: string, version: number) {
  // Only the events up to that version are read and folded, from the newest kept snapshot at or
  // before it when there is one: old versions stay cheap, and so do recent ones of a long flow.
  const { state, folded } = await stateAtRevision(store, flowStreamId(flowId), flowDecider, version);
  if (folded < version) {
    throw new DomainError('VERSION_NOT_FOUND', `flow ${flowId} has no version ${version} (latest is ${folded})`, 'not_found', { latest: folded });
  }
  return state;
}

async function readEventsPage(store: EventStore, flowId: string, query: z.infer<typeof eventsQuery>) {
  const from = query.cursor === undefined ? undefined : Number(query.cursor);
  // One more than asked tells whether another page exists without a second read.
  const events = await store.readStream(flowStreamId(flowId), {
    direction: query.order === 'asc' ? 'forwards' : 'backwards',
    ...(from === undefined ? {} : { fromRevision: from }),
    maxCount: query.limit + 1,
  });
  const items = events.slice(0, query.limit).map(toAuditItem);
  const nextCursor = events.length > query.limit ? String(events[query.limit].revision) : null;
  return { items, nextCursor };
}

export const flowAuditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/events',
    operationId: 'listFlowEvents',
    summary:
      "the flow's event history read from the log: who (actorId), when (at), what (type, data; key hashes shown as \"[hash]\", node secrets masked). Newest first unless order=asc; cursor = the revision to continue from. Still readable after the flow is deleted.",
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'view_resources',
    params: flowParams,
    query: eventsQuery,
    responses: {
      200: { description: 'a page of events', schema: z.object({ success: z.literal(true), items: z.array(eventItemSchema), nextCursor: z.string().nullable() }) },
      400: { description: 'bad limit, cursor or order' },
      401: { description: 'no or invalid credentials' },
      403: { description: 'lacks view_resources' },
      404: { description: 'FLOW_NOT_FOUND: no such flow, or another tenant\'s' },
    },
    async handler({ params, query, principal, services }) {
      await requireVisibleStream(services.eventStore, params.flowId, flowScopeOf(principal!));
      const page = await readEventsPage(services.eventStore, params.flowId, query);
      return { status: 200, body: { success: true, ...page } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/flows/{flowId}/versions/{version}',
    operationId: 'getFlowVersion',
    summary:
      'the flow as it stood right after the event of revision {version} (0 = its creation), rebuilt by folding the log, never from a read model; `deleted` tells whether it was deleted by then',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'view_resources',
    params: versionParams,
    responses: {
      200: {
        description: 'the flow at that version',
        schema: z.object({ success: z.literal(true), version: z.number(), deleted: z.boolean(), flow: flowViewSchema }),
      },
      400: { description: 'version is not a non-negative integer' },
      401: { description: 'no or invalid credentials' },
      403: { description: 'lacks view_resources' },
      404: { description: 'FLOW_NOT_FOUND (no such flow, or another tenant\'s) or VERSION_NOT_FOUND (beyond the stream)' },
    },
    async handler({ params, principal, services }) {
      await requireVisibleStream(services.eventStore, params.flowId, flowScopeOf(principal!));
      const state = await flowAtVersion(services.eventStore, params.flowId, params.version);
      return { status: 200, body: { success: true, version: params.version, deleted: state.deleted, flow: toFlowView(state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/flows/{flowId}/versions/{version}/restore',
    operationId: 'restoreFlowVersion',
    summary:
      "roll the flow back to an earlier version as a new version: name, description, nodes and edges as they stood after revision {version} (node secrets included), written as FlowReplaced with restoredFrom; triggers and their keys stay as they are now (If-Match optional)",
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'edit_resources',
    params: versionParams,
    responses: {
      200: { description: 'the flow as restored (ETag: its new version)', schema: flowReply },
      ...writeErrors,
      400: { description: 'version is not a non-negative integer; VALIDATION_FAILED when that version no longer passes the current rules (names the field)' },
      404: { description: "FLOW_NOT_FOUND (no such flow, another tenant's, or deleted) or VERSION_NOT_FOUND (beyond the stream)" },
      409: { description: 'VERSION_DELETED: the flow was deleted at that version' },
    },
    async handler(input) {
      const { params, principal, services } = input;
      await requireVisibleStream(services.eventStore, params.flowId, flowScopeOf(principal!));
      const state = await flowAtVersion(services.eventStore, params.flowId, params.version);
      if (state.deleted) throw new DomainError('VERSION_DELETED', `flow ${params.flowId} was deleted at version ${params.version}`, 'conflict', { version: params.version });
      // The nodes carry their secrets sealed, as stored: the decider keeps sealed values as given.
      const { name, description, nodes, edges } = state;
      return flowAnswer(await writeFlow(input, params.flowId, { type: 'ReplaceFlow', name, description, nodes, edges, restoredFrom: params.version }));
    },
  }),
];
