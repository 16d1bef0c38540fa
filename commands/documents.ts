import {
  checkDocument, collectionDecider, collectionStreamId, type CollectionScope, type CollectionState, type DocumentLimits,
  type IndexSpecData, type JsonDocument,
} from '../domain/documents/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../infra/ports/event-store.js';
import type { Update } from '../infra/ports/read-store.js';
import { UnsupportedError } from '../infra/read-store/guards.js';
// Pure functions (no I/O): the same MongoDB update semantics the read stores use.
import { UpdateError, applyUpdate, deepCopy, validateUpdate } from '../infra/read-store/update-operators.js';
import { ConflictError, handleCommand, loadState, type CommandContext } from './handle.js';
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
export async function deleteCollection(store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string) {
  const result = await handleCommand(store, {
    streamId: collectionStreamId(collectionId),
    decider: collectionDecider,
    command: { type: 'DeleteCollection', scope, at: context.now.toISOString() },
    context,
  });
  const s = result.state;
  await releaseReservation(store, context, NAME_SCOPE, nameKey(s, s.name ?? ''), collectionId);
  return result;
}

export async function insertDocument(
  store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string,
  input: { documentId: string; document: JsonDocument }, limits: DocumentLimits & { maxDocuments: number },
) {
  const bytes = checkDocument(input.document, limits);
  return handleCommand(store, {
    streamId: collectionStreamId(collectionId),
    decider: collectionDecider,
    command: { type: 'InsertDocument', documentId: input.documentId, document: input.document, bytes, maxDocuments: limits.maxDocuments, scope, at: context.now.toISOString() },
    context,
  });
}

export type DocumentChange = { document: JsonDocument } | { update: Record<string, unknown> };

/**
 * Replaces a document or applies update operators to it. The decision state does not hold
 * documents, so the current one is read from the log at the revision the state names; the command
 * states that revision and the decider refuses it if the document moved on meanwhile (retried here).
 */
export async function updateDocument(
  store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string, documentId: string,
  change: DocumentChange, limits: DocumentLimits, options: { ifMatch?: number; maxAttempts?: number } = {},
) {
  const streamId = collectionStreamId(collectionId);
  const maxAttempts = options.ifMatch === undefined ? (options.maxAttempts ?? 5) : 1;
  if ('update' in change) checkUpdate(change.update);
  for (let attempt = 1; ; attempt++) {
    const { state } = await loadState(store, streamId, collectionDecider);
    const basedOn = liveRevision(state, scope, documentId);
    // If-Match names the document's revision the client saw (the ETag of GET or of the last write).
    if (options.ifMatch !== undefined && options.ifMatch !== basedOn) {
      throw new DomainError('PRECONDITION_FAILED', `document ${documentId} is at revision ${basedOn}, not ${options.ifMatch}`, 'precondition_failed', { expected: options.ifMatch, actual: basedOn });
    }
    const next = 'update' in change ? applyOperators(await documentAt(store, streamId, basedOn), documentId, change.update) : change.document;
    const bytes = checkDocument(next, limits);
    try {
      return await handleCommand(store, {
        streamId,
        decider: collectionDecider,
        command: { type: 'UpdateDocument', documentId, document: next, bytes, update: 'update' in change ? JSON.stringify(change.update) : null, basedOn, scope, at: context.now.toISOString() },
        context,
      });
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'DOCUMENT_MOVED')) throw err;
      if (options.ifMatch !== undefined) throw new DomainError('PRECONDITION_FAILED', `document ${documentId} changed meanwhile`, 'precondition_failed');
      if (attempt >= maxAttempts) throw new ConflictError(streamId);
    }
  }
}

export async function deleteDocument(store: EventStore, context: CommandContext, scope: CollectionScope, collectionId: string, documentId: string) {
  return handleCommand(store, {
    streamId: collectionStreamId(collectionId),
    decider: collectionDecider,
    command: { type: 'DeleteDocument', documentId, scope, at: context.now.toISOString() },
    context,
  });
}

/** The revision of the event that last wrote a live document; 404s as the decider would. */
function liveRevision(state: CollectionState, scope: CollectionScope, documentId: string): number {
  collectionDecider.decide({ type: 'DeleteDocument', documentId, scope, at: '' }, state); // throws COLLECTION_/DOCUMENT_NOT_FOUND
  return state.docs.get(documentId)!.r;
}

/** The document as written by the event at `revision` of the stream. */
export async function documentAt(store: EventStore, streamId: string, revision: number): Promise<JsonDocument> {
  const [event] = await store.readStream(streamId, { fromRevision: revision, maxCount: 1 });
  const document = (event?.data as { document?: JsonDocument } | undefined)?.document;
  if (!event || event.revision !== revision || !document) throw new Error(`${streamId}@${revision} holds no document`);
  return document;
}

function checkUpdate(update: Record<string, unknown>): void {
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

export { collectionStreamId };
