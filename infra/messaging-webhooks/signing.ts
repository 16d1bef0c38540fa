import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`, sent as `webhook-signature: v1,<base64>`.
 *
 * How the user's secret becomes the HMAC key:
 * - `whsec_<base64>` (Standard Webhooks' own form) → the base64-decoded bytes; a receiver verifies
 *   with `new Webhook(secret)`;
 * - any other secret → its UTF-8 bytes; a receiver verifies with
 *   `new Webhook(new TextEncoder().encode(secret), { format: 'raw' })` (for an ASCII secret,
 *   `new Webhook(secret, { format: 'raw' })` is the same key).
 */
export function signingKeyOf(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const encoded = secret.slice('whsec_'.length);
    const bytes = Buffer.from(encoded, 'base64');
    // Only a faithful base64 text counts; anything else is a plain secret that happens to start so.
    if (bytes.length > 0 && bytes.toString('base64').replace(/=+$/, '') === encoded.replace(/=+$/, '')) return bytes;
  }
  return Buffer.from(secret, 'utf8');
}

export function signatureOf(key: Buffer, messageId: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(secret: string, messageId: string, now: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureOf(signingKeyOf(secret), messageId, timestamp, body),
  };
}
