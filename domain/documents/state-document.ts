import type { DocumentEntry } from './state.js';
import type { DocumentStreamEvent } from './events.js';

/** One document's stream folded: is it live, its size, and how its revisions are numbered. */
export interface DocumentState {
  /** Stream revision of the last event (-1: no stream yet). */
  revision: number;
  live: boolean;
  size: number;
  /** Added to stream revisions to give the document's revision (0, or the legacy history's last + 1). */
  base: number;
  /** The live life began in the collection stream (its slot is the legacy count's). */
  legacyLife: boolean;
}

export const initialDocumentState: DocumentState = { revision: -1, live: false, size: 0, base: 0, legacyLife: false };

export function evolveDocument(state: DocumentState, event: DocumentStreamEvent): DocumentState {
  const first = state.revision === -1;
  const base = first ? (event.data.legacyRevision === null ? 0 : event.data.legacyRevision + 1) : state.base;
  const revision = state.revision + 1;
  switch (event.type) {
    case 'DocumentAdded':
      return { revision, base, live: true, size: event.data.size, legacyLife: false };
    case 'DocumentChanged':
      return { revision, base, live: true, size: event.data.size, legacyLife: first ? true : state.legacyLife };
    case 'DocumentRemoved':
      return { revision, base, live: false, size: 0, legacyLife: false };
    case 'DocumentInsertLapsed': // only ever after a non-live state: nothing changes but the revision
    default:
      return { ...state, revision, base };
  }
}

/**
 * What a writer sees of a document: its stream once it has one, else its entry in the collection
 * stream (documents written before per-document streams), else nothing.
 */
export interface DocumentView {
  live: boolean;
  size: number;
  /** The document's revision (-1: never written). */
  revision: number;
  legacyLife: boolean;
}

export function documentView(state: DocumentState, legacy: DocumentEntry | undefined): DocumentView {
  if (state.revision >= 0) return { live: state.live, size: state.size, revision: state.base + state.revision, legacyLife: state.legacyLife };
  if (!legacy) return { live: false, size: 0, revision: -1, legacyLife: false };
  return { live: legacy.live, size: legacy.live ? legacy.b : 0, revision: legacy.r, legacyLife: legacy.live };
}
