import type { Decider } from '../shared/decider.js';
import { decideCollection, type CollectionCommand } from './decide.js';
import { decideDocument, type DocumentCommand, type LapseInsert } from './decide-document.js';
import { documentEventSchemas, documentStreamEventSchemas, type DocumentEvent, type DocumentStreamEvent } from './events.js';
import { evolveCollection, initialCollectionState, type CollectionState } from './state.js';
import { evolveDocument, initialDocumentState, type DocumentState } from './state-document.js';

export * from './events.js';
export * from './state.js';
export * from './state-document.js';
export * from './decide.js';
export * from './decide-document.js';
export * from './slots.js';
export * from './rules.js';
export * from './schema.js';
export * from './query.js';
export { PersistentMap } from './pmap.js';

/** Stream `collection-<id>`: the collection, and its documents' writes from before per-document streams. */
export const collectionDecider: Decider<CollectionCommand, CollectionState, DocumentEvent> = {
  initialState: initialCollectionState,
  eventSchemas: documentEventSchemas,
  evolve: evolveCollection,
  decide: decideCollection,
};

/** Stream `document-<collectionId>.<documentId>`: one document's writes. */
export const documentDecider: Decider<DocumentCommand | LapseInsert, DocumentState, DocumentStreamEvent> = {
  initialState: initialDocumentState,
  eventSchemas: documentStreamEventSchemas,
  evolve: evolveDocument,
  decide: decideDocument,
};
