import { z } from 'zod';

const optionalText = () =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v));
const optionalHttpUrl = () =>
  optionalText().refine((v) => v === undefined || /^https?:\/\/[^\s]+$/.test(v), { message: 'must be an http(s) URL' });

/** Environment variables of the messaging context (spread into configSchema; README's configuration table mirrors it). */
export const messagingConfigShape = {
  /** Base URL of a WAHA server (`http://waha:3000`); unset: only the embedded provider is offered. */
  MESSAGING_WAHA_URL: optionalHttpUrl(),
  /** Sent as `X-Api-Key` on every call to WAHA. */
  MESSAGING_WAHA_API_KEY: optionalText(),
  /** HMAC key WAHA signs its webhook events with (`X-Webhook-Hmac`, SHA-512); required to accept any inbound WAHA event. */
  MESSAGING_WAHA_WEBHOOK_HMAC_KEY: optionalText().refine((v) => v === undefined || v.length >= 16, { message: 'must be at least 16 characters' }),
  /** Deadline of each call to WAHA. */
  MESSAGING_WAHA_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** Base URL WAHA calls back (`…/api/messaging/providers/waha/events`); default PUBLIC_URL, else the origin of the request that created the session. */
  MESSAGING_CALLBACK_BASE_URL: optionalHttpUrl(),
} satisfies Record<string, z.ZodType>;
