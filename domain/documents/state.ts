import type { DocumentEvent, IndexSpecData } from './events.js';
import { PersistentMap } from './pmap.js';

/** Who asks: personal collections are their owner's; organization ones belong to the workspace (as flows). */
export interface CollectionScope {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
}

/** Per document id: the revision of the event that last wrote it, its size, and whether it is live
 * (deleted ids stay as tombstones so their history stays reachable). */
export interface DocumentEntry {
  r: number;
  b: number;
  live: boolean;
}

/**
 * The decision state stays small whatever the collection holds: the live document ids with their
 * last revision and size (a persistent map, so folding 100,000 inserts stays linear), never the
 * documents themselves. A change based on a document's content (update operators) reads that
 * document from the log at its last revision and states it in the command (`basedOn`); the decider
 * refuses it if the document moved on since (DOCUMENT_MOVED, retried by the command layer).
 */
export interface CollectionState {
  exists: boolean;
  deleted: boolean;
  name: string | null;
  ownerId: string | null;
  orgId: string | null;
  workspaceId: string | null;
  schema: string | null;
  indexes: IndexSpecData[];
  docs: PersistentMap<DocumentEntry>;
  /** Live documents. */
  count: number;
  bytes: number;
  /** Revision of the last folded event (-1 before the first); documents' `r` refer to it. */
  revision: number;
}

export const initialCollectionState: CollectionState = {
  exists: false, deleted: false, name: null, ownerId: null, orgId: null, workspaceId: null,
  schema: null, indexes: [], docs: PersistentMap.empty(), count: 0, bytes: 0, revision: -1,
};

export function isCollectionVisibleTo(c: { ownerId: string | null; orgId: string | null; workspaceId: string | null }, scope: CollectionScope): boolean {
  if (c.orgId !== scope.orgId || c.workspaceId !== scope.workspaceId) return false;
  return c.orgId !== null || c.ownerId === scope.userId;
}

export function evolveCollection(state: CollectionState, event: DocumentEvent): CollectionState {
  const revision = state.revision + 1;
  switch (event.type) {
    case 'CollectionCreated': {
      const d = event.data;
      return { ...state, exists: true, name: d.name, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, schema: d.schema, indexes: d.indexes, revision };
    }
    case 'DocumentInserted':
    case 'DocumentUpdated':
      return { ...state, docs: state.docs.set(event.data.documentId, { r: revision, b: event.data.size, live: true }), count: event.data.count, bytes: event.data.bytes, revision };
    case 'DocumentDeleted':
      return { ...state, docs: state.docs.set(event.data.documentId, { r: revision, b: 0, live: false }), count: event.data.count, bytes: event.data.bytes, revision };
    case 'CollectionDeleted':
      return { ...state, deleted: true, count: 0, bytes: 0, revision };
    default:
      return { ...state, revision };
  }
}
