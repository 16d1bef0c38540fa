import { decider, decideByType, DomainError, type Decider } from '../shared/decider.js';
import { previewEventSchemas, type PreviewEvent } from './preview-events.js';
import { evolvePreview, initialPreviewState, previewAt, type PreviewState } from './preview-state.js';

export * from './preview-events.js';
export * from './preview-state.js';

export type PreviewCommand =
  | { type: 'StartPreview'; appId: string; previewId: string; tokenHash: string; expiresAt: string; by: string | null; at: string }
  | { type: 'RevokePreview'; appId: string; by: string | null; at: string };

export const decidePreview = decideByType<PreviewCommand, PreviewState, PreviewEvent>({
  StartPreview(c, state) {
    const events: PreviewEvent[] = [];
    if (state.current) events.push({ type: 'PreviewRevoked', data: { appId: c.appId, previewId: state.current.previewId, reason: 'replaced', by: c.by, at: c.at } });
    events.push({ type: 'PreviewStarted', data: { appId: c.appId, previewId: c.previewId, tokenHash: c.tokenHash, expiresAt: c.expiresAt, by: c.by, at: c.at } });
    return events;
  },
  RevokePreview(c, state) {
    // An expired preview is revoked all the same (its record closes); none at all is a 404.
    if (!state.current) throw new DomainError('PREVIEW_NOT_FOUND', 'the app has no live preview', 'not_found');
    return [{ type: 'PreviewRevoked', data: { appId: c.appId, previewId: state.current.previewId, reason: 'revoked', by: c.by, at: c.at } }];
  },
});

export const previewDecider: Decider<PreviewCommand, PreviewState, PreviewEvent> = decider(initialPreviewState, evolvePreview, decidePreview, previewEventSchemas);
