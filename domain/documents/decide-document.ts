import { DomainError } from '../shared/decider.js';
import type { DocumentStreamEvent } from './events.js';
import { enforceSchema } from './schema.js';
import type { DocumentEntry } from './state.js';
import { documentView, type DocumentState } from './state-document.js';

/**
 * Writes to one document, decided on its own stream. The collection's facts a write depends on
 * (it is live and the caller's, its schema, the document's entry in the collection stream from
 * before per-document streams) are folded from the collection stream by the command handler and
 * stated in the command; the collection's document limit is kept by slot claims (./slots.ts).
 */
interface Base {
  collectionId: string;
  documentId: string;
  /** The collection exists, is not deleted and belongs to the caller's scope. */
  collectionLive: boolean;
  schema: string | null;
  legacy: DocumentEntry | undefined;
  at: string;
}
export type DocumentCommand =
  | (Base & { type: 'AddDocument'; document: Record<string, unknown>; bytes: number })
  | (Base & { type: 'ChangeDocument'; document: Record<string, unknown>; bytes: number; update: string | null; basedOn: number })
  | (Base & { type: 'RemoveDocument' });

/**
 * Fences a slot claim made after stream revision `after` that was never written (its inserter
 * stopped): decided whatever the collection's state, and only on the stream as the claim saw it
 * (the command handler appends it expecting `after`), so an insert that did land is never fenced.
 */
export interface LapseInsert {
  type: 'LapseInsert';
  collectionId: string;
  documentId: string;
  after: number;
  /** The document's entry in the collection stream (for the revision numbering of a first event). */
  legacy: DocumentEntry | undefined;
  at: string;
}

export function decideDocument(command: DocumentCommand | LapseInsert, state: DocumentState): DocumentStreamEvent[] {
  if (command.type === 'LapseInsert') return decideLapse(command, state);
  if (!command.collectionLive) throw new DomainError('COLLECTION_NOT_FOUND', 'collection not found', 'not_found');
  const { collectionId, documentId, at } = command;
  const view = documentView(state, command.legacy);
  const first = state.revision === -1;
  const legacyRevision = first && command.legacy ? command.legacy.r : null;
  const base = first ? (legacyRevision === null ? 0 : legacyRevision + 1) : state.base;
  const revision = base + state.revision + 1;
  const ref = { collectionId, documentId, revision, legacyRevision, at };
  if (command.type === 'AddDocument') {
    if (view.live) throw new DomainError('DOCUMENT_EXISTS', `a document with id ${documentId} already exists`, 'conflict', { field: 'body.id' });
    enforceSchema(command.schema, command.document);
    return [{ type: 'DocumentAdded', data: { ...ref, document: command.document, size: command.bytes } }];
  }
  if (!view.live) throw new DomainError('DOCUMENT_NOT_FOUND', `document ${documentId} not found`, 'not_found');
  if (command.type === 'RemoveDocument') {
    return [{ type: 'DocumentRemoved', data: { ...ref, previousSize: view.size, legacyLife: view.legacyLife } }];
  }
  if (view.revision !== command.basedOn) throw new DomainError('DOCUMENT_MOVED', `document ${documentId} changed since revision ${command.basedOn}`, 'conflict');
  enforceSchema(command.schema, command.document);
  return [{ type: 'DocumentChanged', data: { ...ref, document: command.document, size: command.bytes, previousSize: view.size, update: command.update } }];
}

function decideLapse(command: LapseInsert, state: DocumentState): DocumentStreamEvent[] {
  if (state.revision !== command.after) return []; // the stream moved on: that claim was written (or fenced) already
  const { collectionId, documentId, at } = command;
  const first = state.revision === -1;
  const legacyRevision = first && command.legacy ? command.legacy.r : null;
  const base = first ? (legacyRevision === null ? 0 : legacyRevision + 1) : state.base;
  return [{ type: 'DocumentInsertLapsed', data: { collectionId, documentId, revision: base + state.revision + 1, legacyRevision, at } }];
}
