import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * The preview of an app (`apppreview-<appId>`): at most one live preview URL per app. Only the
 * sha256 of its token is stored; the token itself is shown once, in the URL POST …/preview answers.
 */
export const previewEventSchemas = {
  PreviewStarted: z.object({ appId: z.string(), previewId: z.string(), tokenHash: z.string().regex(/^[0-9a-f]{64}$/), expiresAt: z.string(), by: z.string().nullable(), at: z.string() }),
  /** `replaced`: a new POST …/preview; `revoked`: DELETE …/preview. */
  PreviewRevoked: z.object({ appId: z.string(), previewId: z.string(), reason: z.enum(['revoked', 'replaced']), by: z.string().nullable(), at: z.string() }),
};

export type PreviewEvent = EventsOf<typeof previewEventSchemas>;

export const appPreviewStreamId = (appId: string) => `apppreview-${appId}`;
