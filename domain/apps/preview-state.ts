import type { PreviewEvent } from './preview-events.js';

export interface LivePreview {
  previewId: string;
  tokenHash: string;
  expiresAt: string;
  createdAt: string;
  createdBy: string | null;
}

export interface PreviewState {
  appId: string;
  current: LivePreview | null;
  version: number;
}

export const initialPreviewState: PreviewState = { appId: '', current: null, version: -1 };

export function evolvePreview(state: PreviewState, event: PreviewEvent): PreviewState {
  const version = state.version + 1;
  switch (event.type) {
    case 'PreviewStarted': {
      const d = event.data;
      return { appId: d.appId, current: { previewId: d.previewId, tokenHash: d.tokenHash, expiresAt: d.expiresAt, createdAt: d.at, createdBy: d.by }, version };
    }
    case 'PreviewRevoked':
      return { ...state, current: state.current?.previewId === event.data.previewId ? null : state.current, version };
    default:
      return state;
  }
}

/** The live preview whose token hashes to `tokenHash` at time `now` (ISO), else null. The caller compares hashes in constant time. */
export function previewAt(state: PreviewState, now: string): LivePreview | null {
  const p = state.current;
  if (!p || p.expiresAt <= now) return null;
  return p;
}
