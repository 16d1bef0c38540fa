import { collectionDecider, collectionStreamId, isCollectionVisibleTo, type CollectionScope, type JsonDocument } from '../domain/documents/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { loadState } from './handle.js';

export interface HistoryEntry {
  revision: number;
  type: 'inserted' | 'updated' | 'deleted';
  /** The document after the change (with its `_id`); null for a deletion. */
  document: JsonDocument | null;
  /** The update operators when the change was given as operators. */
  update: Record<string, unknown> | null;
  at: string;
  actorId: string | null;
}

const KINDS = { DocumentInserted: 'inserted', DocumentUpdated: 'updated', DocumentDeleted: 'deleted' } as const;

/**
 * A document's history, newest first, read from the log on purpose (it is the audit trail): the
 * decision state names the revision of the document's last event, and every document event names
 * the previous one (`previousRevision`), so a page costs one point read per entry however large
 * the collection's stream is. `before` is the revision to continue from (the previous page's cursor).
 */
export async function documentHistory(
  store: EventStore, scope: CollectionScope, collectionId: string, documentId: string, limit: number, before: number | null,
): Promise<{ items: HistoryEntry[]; next: number | null }> {
  const streamId = collectionStreamId(collectionId);
  const { state } = await loadState(store, streamId, collectionDecider);
  if (!state.exists || state.deleted || !isCollectionVisibleTo(state, scope)) {
    throw new DomainError('COLLECTION_NOT_FOUND', 'collection not found', 'not_found');
  }
  const head = state.docs.get(documentId);
  if (!head) throw new DomainError('DOCUMENT_NOT_FOUND', `document ${documentId} not found`, 'not_found');
  const items: HistoryEntry[] = [];
  let next: number | null = before ?? head.r;
  while (next !== null && items.length < limit) {
    const [event] = await store.readStream(streamId, { fromRevision: next, maxCount: 1 });
    const data = event?.data as { documentId?: string; document?: JsonDocument; update?: string | null; previousRevision?: number | null; at: string } | undefined;
    const kind = event && KINDS[event.type as keyof typeof KINDS];
    // A cursor that does not land on this document's chain is not ours.
    if (!event || !kind || data?.documentId !== documentId) throw new DomainError('INVALID_CURSOR', 'cursor does not belong to this history', 'invalid', { field: 'query.cursor' });
    items.push({
      revision: event.revision,
      type: kind,
      document: data.document ? { _id: documentId, ...data.document } : null,
      update: data.update ? (JSON.parse(data.update) as Record<string, unknown>) : null,
      at: data.at,
      actorId: event.metadata.actorId,
    });
    next = data.previousRevision ?? null;
  }
  return { items, next };
}
