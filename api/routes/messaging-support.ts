import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { CHAT_ID_PATTERN, msgSessionStreamId, sessionNotFound } from '../../domain/messaging/index.js';
import { findMessagingSession, type MessagingSessionView } from '../../projections/messaging.js';
import type { RouteInput } from '../route.js';

export const tag = 'Messaging sessions';
export const auth = 'bearer' as const;

export const sessionIdSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a session id');
export const chatIdSchema = z.string().regex(CHAT_ID_PATTERN, 'must be a chat id such as <sessionId>@embedded, <id>@g.embedded or 123@c.us');
export const sessionParams = z.strictObject({ sessionId: sessionIdSchema });
export const chatParams = z.strictObject({ sessionId: sessionIdSchema, chatId: chatIdSchema });

export const errors = {
  400: { description: 'VALIDATION_FAILED (names the field) or a MESSAGING_* input code' },
  401: { description: 'no or invalid credentials' },
  403: { description: 'FORBIDDEN: the credential lacks the permission' },
  404: { description: "MESSAGING_SESSION_NOT_FOUND (missing, deleted or another tenant's)" },
};
export const notWorkingError = { description: 'MESSAGING_SESSION_NOT_WORKING: the session is not WORKING' };
export const providerError = { description: 'MESSAGING_PROVIDER_ERROR / MESSAGING_PROVIDER_UNREACHABLE: the WAHA server failed' };

export const meOut = z.object({ id: z.string(), pushName: z.string().optional() }).nullable();
export const sessionOut = z.object({
  id: z.string(),
  name: z.string(),
  provider: z.enum(['embedded', 'waha']),
  status: z.enum(['STOPPED', 'STARTING', 'SCAN_QR_CODE', 'WORKING', 'FAILED']),
  address: z.string().nullable(),
  me: meOut,
  qr: z.string().nullable(),
  reason: z.string().nullable(),
  lastChangeAt: z.string(),
  createdAt: z.string(),
});

export function sessionView(doc: MessagingSessionView) {
  return {
    id: doc.id,
    name: doc.name,
    provider: doc.provider,
    status: doc.status,
    address: doc.address ?? doc.me?.id ?? null,
    me: doc.me,
    qr: doc.qr,
    reason: doc.reason,
    lastChangeAt: doc.lastChangeAt,
    createdAt: doc.createdAt,
  };
}

type AnyInput = RouteInput<unknown, unknown, unknown>;

/** The caller's session from the read model, or MESSAGING_SESSION_NOT_FOUND (missing, deleted and foreign alike). */
export async function callerSession(input: AnyInput, sessionId: string): Promise<MessagingSessionView> {
  const doc = await findMessagingSession(input.services.readStore, sessionId, flowScopeOf(input.principal!));
  if (!doc) throw sessionNotFound();
  return doc;
}

/** Read-your-writes on the session's stream, then the session as the read model has it. */
export async function settledSession(input: AnyInput, sessionId: string, position: number | null): Promise<MessagingSessionView> {
  await input.settle(position, msgSessionStreamId(sessionId));
  return callerSession(input, sessionId);
}
