import {
  collectionDecider, collectionStreamId, documentDecider, documentStreamId, isCollectionVisibleTo, type CollectionScope, type JsonDocument,
} from '../domain/documents/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { EventStore } from '../ports/event-store.js';
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

const KINDS = {
  DocumentInserted: 'inserted', DocumentUpdated: 'updated', DocumentDeleted: 'deleted',
  DocumentAdded: 'inserted', DocumentChanged: 'updated', DocumentRemoved: 'deleted',
} as const;

type EventData = { documentId?: string; document?: JsonDocument; update?: string | null; previousRevision?: number | null; legacyRevision?: number | null; revision?: number; at: string };

const badCursor = () => new DomainError('INVALID_CURSOR', 'cursor does not belong to this history', 'invalid', { field: 'query.cursor' });

/** Where the next page starts: in the document's stream (a stream revision) or in the collection stream (a revision there). */
type Position = { stream: 'document' | 'collection'; revision: number } | null;

/**
 * A document's history, newest first, read from the log on purpose (it is the audit trail): first
 * its own stream, read backwards, then, for a document written before per-document streams, its
 * chain in the collection stream (the stream's first event names the chain's head, and each event
 * there names the previous one), one point read per entry however large that stream is. Cursors
 * are document revisions: those at or above the document stream's offset are in that stream.
 */
export async function documentHistory(
  store: EventStore, scope: CollectionScope, collectionId: string, documentId: string, limit: number, before: number | null,
): Promise<{ items: HistoryEntry[]; next: number | null }> {
  const { state } = await loadState(store, collectionStreamId(collectionId), collectionDecider);
  if (!state.exists || state.deleted || !isCollectionVisibleTo(state, scope)) {
    throw new DomainError('COLLECTION_NOT_FOUND', 'collection not found', 'not_found');
  }
  const streamId = documentStreamId(collectionId, documentId);
  const { state: doc } = await loadState(store, streamId, documentDecider);
  const legacyHead = state.docs.get(documentId);
  if (doc.revision < 0 && !legacyHead) throw new DomainError('DOCUMENT_NOT_FOUND', `document ${documentId} not found`, 'not_found');

  let at: Position;
  if (before === null) at = doc.revision >= 0 ? { stream: 'document', revision: doc.revision } : { stream: 'collection', revision: legacyHead!.r };
  else if (doc.revision >= 0 && before >= doc.base) {
    if (before - doc.base > doc.revision) throw badCursor();
    at = { stream: 'document', revision: before - doc.base };
  } else at = { stream: 'collection', revision: before };

  const items: HistoryEntry[] = [];
  while (at !== null && items.length < limit) {
    if (at.stream === 'document') {
      const events = await store.readStream(streamId, { direction: 'backwards', fromRevision: at.revision, maxCount: limit - items.length });
      // A lapsed claim's fence takes a revision but wrote nothing: not part of the document's history.
      for (const event of events) if (event.type !== 'DocumentInsertLapsed') items.push(entryOf(event, documentId));
      const last = events[events.length - 1];
      if (!last) throw badCursor();
      const legacy = (last.data as EventData).legacyRevision ?? null;
      at = last.revision > 0 ? { stream: 'document', revision: last.revision - 1 } : legacy === null ? null : { stream: 'collection', revision: legacy };
      continue;
    }
    const [event] = await store.readStream(collectionStreamId(collectionId), { fromRevision: at.revision, maxCount: 1 });
    // A cursor that does not land on this document's chain is not ours.
    if (!event || event.revision !== at.revision) throw badCursor();
    items.push(entryOf(event, documentId));
    const previous = (event.data as EventData).previousRevision ?? null;
    at = previous === null ? null : { stream: 'collection', revision: previous };
  }
  const next = at === null ? null : at.stream === 'document' ? doc.base + at.revision : at.revision;
  return { items, next };
}

function entryOf(event: RecordedEvent, documentId: string): HistoryEntry {
  const data = event.data as EventData;
  const kind = KINDS[event.type as keyof typeof KINDS];
  if (!kind || data.documentId !== documentId) throw badCursor();
  return {
    // Events of the document's stream state the document's revision; in the collection stream it is the event's.
    revision: data.revision ?? event.revision,
    type: kind,
    document: data.document ? { _id: documentId, ...data.document } : null,
    update: data.update ? (JSON.parse(data.update) as Record<string, unknown>) : null,
    at: data.at,
    actorId: event.metadata.actorId,
  };
}
