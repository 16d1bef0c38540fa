import { randomUUID } from 'node:crypto';
import {
  checkDocument, claimHolds, nestsDeeperThan, collectionDecider, collectionStreamId, documentDecider, documentStreamId, documentView, dueClaims, isCollectionVisibleTo,
  slotDecider, slotStreamId, type CollectionScope, type CollectionState, type DocumentLimits, type IndexSpecData, type JsonDocument, type SlotClaimRef,
} from '../domain/documents/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../ports/event-store.js';
import { UnsupportedError } from '../domain/documents/store-rules.js';
// The same MongoDB update semantics the read stores use.
import { UpdateError, applyUpdate, deepCopy, validateUpdate, type Update } from '../domain/documents/update-operators.js';
import { ConflictError, PreconditionFailedError, handleCommand, loadState, metadataOf, type CommandContext } from './handle.js';
import { reservationDecider } from '../domain/reservations/index.js';
import { claimReservation, releaseReservation, reservationStreamId } from './reservations.js';

/** Collections follow flows' tenancy: personal ones are the owner's, organization ones the workspace's. */
export function collectionScopeOf(principal: Principal): CollectionScope {
  return { userId: principal.userId, orgId: principal.orgId, workspaceId: principal.workspaceId };
}

const NAME_SCOPE = 'collection-name';
/** Names are unique (case-insensitively) per owner: the user in a personal workspace, else the workspace. */
function nameKey(owner: { ownerId: string | null; orgId: string | null; workspaceId: string | null }, name: string): string {
  const who = owner.orgId === null ? `u:${owner.ownerId}` : `o:${owner.orgId}/${owner.workspaceId}`;
  return `${who}/${name.toLowerCase()}`;
}

export const USER_UPDATE_OPERATORS = ['$set', '$unset', '$inc', '$push', '$pull', '$addToSet'];

export interface CreateCollectionInput {
  collectionId: string;
  name: string;
  schema: string | null;
  indexes: IndexSpecData[];
}

export async function createCollection(store: EventStore, context: CommandContext, scope: CollectionScope, input: CreateCollectionInput) {
  const owner = { ownerId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId };
  const key = nameKey(owner, input.name);
  for (let attempt = 1; ; attempt++) {
    try {
      await claimReservation(store, context, NAME_SCOPE, key, input.collectionId);
      break;
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'ALREADY_TAKEN')) throw err;
      // A process that died between CollectionDeleted and the release left the name taken by a
      // deleted collection: release it for that collection (idempotent) and claim again, once.
      if (attempt === 1 && (await releaseIfHolderDeleted(store, context, key))) continue;
      throw new DomainError('COLLECTION_NAME_TAKEN', `a collection named "${input.name}" already exists`, 'conflict', { field: 'body.name' });
    }
  }
  return handleCommand(store, {
    streamId: collectionStreamId(input.collectionId),
    decider: collectionDecider,
    command: { type: 'CreateCollection', ...input, scope, at: context.now.toISOString() },
    context,
  });
}

/** True when the name's reservation was held by a collection that is deleted, and is now released. */
async function releaseIfHolderDeleted(store: EventStore, context: CommandContext, key: string): Promise<boolean> {
  const { state } = await loadState(store, reservationStreamId(NAME_SCOPE, key), reservationDecider);
  if (state.ownerId === null) return true; // released meanwhile: claim again
  // A deleted collection's last event is CollectionDeleted (the decider refuses anything after it).
  const [last] = await store.readStream(collectionStreamId(state.ownerId), { direction: 'backwards', maxCount: 1 });
  if (last?.type !== 'CollectionDeleted') return false;
  await releaseReservation(store, context, NAME_SCOPE, key, state.ownerId);
  return true;
}

/** Deletes the collection (its events stay in the log) and frees its name (or the next create
 * with that name does, should the process stop between the two: see releaseIfHolderDeleted). */
export async function deleteCollection(
  store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string, options: { claimTtlMs?: number } = {},
) {
  const { state } = await loadState(store, collectionStreamId(collectionId), collectionDecider);
  const live = state.exists && !state.deleted && isCollectionVisibleTo(state, scope);
  // The count it reports leaves out the claims that lapsed (their inserts never came).
  if (live) await reconcileSlots(store, context, collectionId, options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS);
  const documents = state.exists ? await liveDocuments(store, state, collectionId) : 0;
  const result = await handleCommand(store, {
    streamId: collectionStreamId(collectionId),
    decider: collectionDecider,
    command: { type: 'DeleteCollection', documents, scope, at: context.now.toISOString() },
    context,
  });
  const s = result.state;
  await releaseReservation(store, context, NAME_SCOPE, nameKey(s, s.name ?? ''), collectionId);
  return result;
}

/** The collection's facts a document write needs, folded from its stream (404s as the decider would). */
async function collectionFacts(store: EventStore, scope: CollectionScope, collectionId: string, documentId: string) {
  const { state } = await loadState(store, collectionStreamId(collectionId), collectionDecider);
  const collectionLive = state.exists && !state.deleted && isCollectionVisibleTo(state, scope);
  return { state, base: { collectionId, documentId, collectionLive, schema: state.schema, legacy: state.docs.get(documentId) } };
}

const collectionNotFound = () => new DomainError('COLLECTION_NOT_FOUND', 'collection not found', 'not_found');

/**
 * A document write is decided on the collection as read before it, so it can race the collection's
 * deletion: the log's order settles it. A write whose event comes after CollectionDeleted is void
 * (the projection drops it: projectDocument) and answers 404 like a write that came later still;
 * one before it was a write to a live collection, deleted after it. Positions order the whole log
 * and an appended event's position is above every event already visible (SQLite: one writer;
 * EventStoreDB: commit positions), so a deletion not seen here comes after the write.
 */
async function writtenBeforeDeletion<R extends { position: number | null }>(store: EventStore, collectionId: string, result: R): Promise<R> {
  if (result.position === null) return result; // nothing appended
  const [last] = await store.readStream(collectionStreamId(collectionId), { direction: 'backwards', maxCount: 1 });
  if (last?.type === 'CollectionDeleted' && last.position < result.position) throw collectionNotFound();
  return result;
}

/**
 * Inserts into the document's own stream, so inserts of different documents never contend. The
 * collection's document limit is a slot claimed first (domain/documents/slots.ts; appended without
 * an expected revision, so it never conflicts either); the document's first event is then appended
 * expecting the stream revision the claim was made after. If the document moved meanwhile (another
 * writer of the same id), the claim is made again for what is there now.
 */
export async function insertDocument(
  store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string,
  input: { documentId: string; document: JsonDocument }, limits: DocumentLimits & { maxDocuments: number; claimTtlMs?: number },
) {
  const bytes = checkDocument(input.document, limits);
  const streamId = documentStreamId(collectionId, input.documentId);
  for (let attempt = 1; ; attempt++) {
    const { state: collection, base } = await collectionFacts(store, scope, collectionId, input.documentId);
    const { state, revision } = await loadState(store, streamId, documentDecider);
    const command = { type: 'AddDocument' as const, ...base, document: input.document, bytes, at: context.now.toISOString() };
    documentDecider.decide(command, state); // refuses before a slot is claimed
    await claimSlot(store, context, collectionId, input.documentId, revision, collection.count, limits.maxDocuments, limits.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS);
    let result;
    try {
      // A claim that lapsed meanwhile (DOCUMENTS_CLAIM_TTL_MS) was fenced at this revision: claimed again below.
      result = await handleCommand(store, { streamId, decider: documentDecider, command, context, expectedRevision: revision });
    } catch (err) {
      if (!(err instanceof PreconditionFailedError) || attempt >= MAX_DOCUMENT_ATTEMPTS) throw err;
      continue;
    }
    return writtenBeforeDeletion(store, collectionId, result);
  }
}

const MAX_DOCUMENT_ATTEMPTS = 10;

/**
 * The collection's document limit as slot claims (domain/documents/slots.ts), and their upkeep: a
 * claim whose insert never came (the process stopped between claim and write) lapses after the
 * claim TTL. A reconciliation fences each such claim with DocumentInsertLapsed on its document
 * stream (appended expecting the revision the claim was made after, so an insert that landed is
 * never fenced and a late one is refused) and gives the fenced claims' slots back in one
 * DocumentSlotsReconciled. It runs when a claim finds the collection full (then claims again, once)
 * and after every RECONCILE_EVERY-th claim, so the claims left to check stay few.
 */
export const DEFAULT_CLAIM_TTL_MS = 60_000;
export const RECONCILE_EVERY = 256;
/** Claims checked by one reconciliation (one document stream read each); the rest wait for the next. */
const RECONCILE_BATCH = 1000;
/** Document streams read at once by a reconciliation. */
const RECONCILE_PARALLEL = 8;

const slotsFull = (max: number) => new DomainError('COLLECTION_FULL', `a collection holds at most ${max} documents`, 'conflict');

export async function claimSlot(
  store: EventStore, context: CommandContext, collectionId: string, documentId: string, after: number, base: number, max: number, ttlMs: number,
): Promise<void> {
  const streamId = slotStreamId(collectionId);
  const claim = async () => {
    const data = { documentId, after, base, max, at: context.now.getTime() };
    const appended = await store.append(streamId, [{ id: randomUUID(), type: 'DocumentSlotClaimed', data, metadata: metadataOf(context) }], 'any');
    const { state } = await loadState(store, streamId, slotDecider);
    return { holds: claimHolds(state, documentId, after), revision: appended.revision };
  };
  const first = await claim();
  if (first.holds) {
    if ((first.revision + 1) % RECONCILE_EVERY === 0) {
      // Upkeep, not this insert's business: a failure is retried by the next trigger, and failing
      // the insert for it would leave this very claim unwritten.
      await reconcileSlots(store, context, collectionId, ttlMs).catch(() => 0);
    }
    return;
  }
  if ((await reconcileSlots(store, context, collectionId, ttlMs)) > 0 && (await claim()).holds) return;
  throw slotsFull(max);
}

export async function releaseSlot(store: EventStore, context: CommandContext, collectionId: string, documentId: string, removedAt: number, legacyLife: boolean) {
  const data = { documentId, removedAt, legacyLife };
  await store.append(slotStreamId(collectionId), [{ id: randomUUID(), type: 'DocumentSlotReleased', data, metadata: metadataOf(context) }], 'any');
}

/** Live documents of a collection: those counted in its stream, less the removed ones, plus the claimed slots. */
export async function liveDocuments(store: EventStore, collection: CollectionState, collectionId: string): Promise<number> {
  const { state } = await loadState(store, slotStreamId(collectionId), slotDecider);
  return collection.count - state.legacyRemoved + state.count;
}

/**
 * Checks the claims older than the TTL not checked yet; returns how many it found lapsed (their
 * slots are given back). Safe to run anywhere, any number of times at once: a fence is decided on
 * the document stream's revision, and giving back a claim twice is absorbed by the fold.
 */
export async function reconcileSlots(store: EventStore, context: CommandContext, collectionId: string, ttlMs: number): Promise<number> {
  const streamId = slotStreamId(collectionId);
  const { state } = await loadState(store, streamId, slotDecider);
  const due = dueClaims(state, context.now.getTime(), ttlMs, RECONCILE_BATCH);
  if (due.claims.length === 0) return 0;
  const { state: collection } = await loadState(store, collectionStreamId(collectionId), collectionDecider);
  const lapsed: SlotClaimRef[] = [];
  for (let i = 0; i < due.claims.length; i += RECONCILE_PARALLEL) {
    const batch = due.claims.slice(i, i + RECONCILE_PARALLEL);
    const outcomes = await Promise.all(batch.map((claim) => fenceIfUnwritten(store, context, collectionId, claim, collection)));
    batch.forEach((claim, j) => outcomes[j] && lapsed.push(claim));
  }
  const data = { through: due.through, lapsed };
  await store.append(streamId, [{ id: randomUUID(), type: 'DocumentSlotsReconciled', data, metadata: metadataOf(context) }], 'any');
  return lapsed.length;
}

/** True when the claim's life was never written: fenced now, or by an earlier reconciliation. */
async function fenceIfUnwritten(store: EventStore, context: CommandContext, collectionId: string, claim: SlotClaimRef, collection: CollectionState): Promise<boolean> {
  const streamId = documentStreamId(collectionId, claim.documentId);
  const command = { type: 'LapseInsert' as const, collectionId, documentId: claim.documentId, after: claim.after, legacy: collection.docs.get(claim.documentId), at: context.now.toISOString() };
  try {
    await handleCommand(store, { streamId, decider: documentDecider, command, context, expectedRevision: claim.after });
  } catch (err) {
    if (!(err instanceof PreconditionFailedError)) throw err;
  }
  // Whoever came first (this fence, another reconciler's, or the insert) holds the revision after the claim.
  const [next] = await store.readStream(streamId, { fromRevision: claim.after + 1, maxCount: 1 });
  return next?.revision === claim.after + 1 && next.type === 'DocumentInsertLapsed';
}

export type DocumentChange = { document: JsonDocument } | { update: Record<string, unknown> };

/**
 * Replaces a document or applies update operators to it, on the document's stream. The current
 * document is read from the log at its last event; the append expects the stream revision it was
 * read at, and a document that moved meanwhile is read again (bounded), unless If-Match named it.
 */
export async function updateDocument(
  store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string, documentId: string,
  change: DocumentChange, limits: DocumentLimits, options: { ifMatch?: number; maxAttempts?: number } = {},
) {
  const streamId = documentStreamId(collectionId, documentId);
  const maxAttempts = options.ifMatch === undefined ? (options.maxAttempts ?? MAX_DOCUMENT_ATTEMPTS) : 1;
  if ('update' in change) checkUpdate(change.update, limits.maxDepth);
  for (let attempt = 1; ; attempt++) {
    const { base } = await collectionFacts(store, scope, collectionId, documentId);
    const { state, revision } = await loadState(store, streamId, documentDecider);
    const view = documentView(state, base.legacy);
    documentDecider.decide({ type: 'RemoveDocument', ...base, at: '' }, state); // throws COLLECTION_/DOCUMENT_NOT_FOUND
    // If-Match names the document's revision the client saw (the ETag of GET or of the last write).
    if (options.ifMatch !== undefined && options.ifMatch !== view.revision) {
      throw new DomainError('PRECONDITION_FAILED', `document ${documentId} is at revision ${view.revision}, not ${options.ifMatch}`, 'precondition_failed', { expected: options.ifMatch, actual: view.revision });
    }
    const current = () => (revision >= 0 ? documentAt(store, streamId, revision) : documentAt(store, collectionStreamId(collectionId), view.revision));
    const next = 'update' in change ? applyOperators(await current(), documentId, change.update) : change.document;
    const bytes = checkDocument(next, limits);
    const command = {
      type: 'ChangeDocument' as const, ...base, document: next, bytes, update: 'update' in change ? JSON.stringify(change.update) : null, basedOn: view.revision, at: context.now.toISOString(),
    };
    let result;
    try {
      result = await handleCommand(store, { streamId, decider: documentDecider, command, context, expectedRevision: revision });
    } catch (err) {
      if (!(err instanceof PreconditionFailedError || (err instanceof DomainError && err.code === 'DOCUMENT_MOVED'))) throw err;
      if (options.ifMatch !== undefined) throw new DomainError('PRECONDITION_FAILED', `document ${documentId} changed meanwhile`, 'precondition_failed');
      if (attempt >= maxAttempts) throw new ConflictError(streamId);
      continue;
    }
    return writtenBeforeDeletion(store, collectionId, result);
  }
}

export async function deleteDocument(store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string, documentId: string) {
  const { base } = await collectionFacts(store, scope, collectionId, documentId);
  const result = await handleCommand(store, {
    streamId: documentStreamId(collectionId, documentId),
    decider: documentDecider,
    command: { type: 'RemoveDocument', ...base, at: context.now.toISOString() },
    context,
    maxAttempts: MAX_DOCUMENT_ATTEMPTS,
  }).then((r) => writtenBeforeDeletion(store, collectionId, r));
  const removed = result.events[0];
  if (removed?.type === 'DocumentRemoved') await releaseSlot(store, context, collectionId, documentId, result.revision, removed.data.legacyLife);
  return result;
}

/** The document as written by the event at `revision` of the stream. */
export async function documentAt(store: EventStore, streamId: string, revision: number): Promise<JsonDocument> {
  const [event] = await store.readStream(streamId, { fromRevision: revision, maxCount: 1 });
  const document = (event?.data as { document?: JsonDocument } | undefined)?.document;
  if (!event || event.revision !== revision || !document) throw new Error(`${streamId}@${revision} holds no document`);
  return document;
}

/** Values deeper than a document may be are refused before the recursive checks below walk them. */
function checkUpdate(update: Record<string, unknown>, maxDepth: number): void {
  // Operator, field, then the value: a value may nest as deep as a document.
  if (nestsDeeperThan(update, maxDepth + 2)) throw new DomainError('INVALID_UPDATE', `update values nest deeper than ${maxDepth} levels`, 'invalid', { path: 'body.update' });
  const bad = Object.keys(update).find((op) => !USER_UPDATE_OPERATORS.includes(op));
  if (bad !== undefined) {
    throw new DomainError('INVALID_UPDATE', `update operator ${bad} is not supported (use ${USER_UPDATE_OPERATORS.join(', ')})`, 'invalid', { path: `body.update.${bad}` });
  }
  try {
    validateUpdate(update as Update);
  } catch (err) {
    if (err instanceof UpdateError || err instanceof UnsupportedError) throw new DomainError('INVALID_UPDATE', err.message, 'invalid', { path: 'body.update' });
    throw err;
  }
}

function applyOperators(current: JsonDocument, documentId: string, update: Record<string, unknown>): JsonDocument {
  const doc = { _id: documentId, ...deepCopy(current) };
  try {
    applyUpdate(doc, update as Update);
  } catch (err) {
    if (err instanceof UpdateError || err instanceof UnsupportedError) throw new DomainError('INVALID_UPDATE', err.message, 'invalid', { path: 'body.update' });
    throw err;
  }
  const { _id, ...rest } = doc;
  return rest;
}

export { collectionStreamId, documentStreamId };
