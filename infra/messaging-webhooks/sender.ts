import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SealedBox } from '../auth/sealed-box.js';
import { OutboundError, isRefusedAddress, outboundHttp } from '../http/outbound.js';
import type { OutboundHttp } from '../../ports/outbound-http.js';
import type { WebhookSender } from '../../ports/messaging-webhooks.js';
import { signedHeaders } from './signing.js';

/** A receiver's answer body is not used; this much is read and the rest dropped. */
const MAX_ANSWER_BYTES = 16 * 1024;

export interface SenderOptions {
  sealedBox: Pick<SealedBox, 'open'>;
  timeoutMs: number;
  allowPrivateNetwork: boolean;
  /**
   * Outbound HTTP: the container's (keep-alive per OUTBOUND_KEEP_ALIVE), else the process-wide
   * default. Deliveries to one receiver reuse a connection pinned to the address checked for them.
   */
  http?: Pick<OutboundHttp, 'fetch'>;
}

/** The signed HTTP sender: Standard Webhooks headers, outbound HTTP with its address policy, one deadline. */
export function webhookSender(options: SenderOptions): WebhookSender {
  const http = options.http ?? outboundHttp;
  return {
    async send({ url, secretSealed, messageId, body, sentAt, signal }) {
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'flowsvc-webhooks/1',
        ...signedHeaders(options.sealedBox.open(secretSealed), messageId, sentAt, body),
      };
      const started = performance.now();
      const durationMs = () => Math.round(performance.now() - started);
      try {
        const answer = await http.fetch(url, {
          method: 'POST',
          headers,
          body,
          timeoutMs: options.timeoutMs,
          signal,
          allowPrivateNetwork: options.allowPrivateNetwork,
          // A redirect is an answer like any other non-2xx: following it would turn the POST into a GET.
          maxRedirects: 0,
          maxResponseBytes: MAX_ANSWER_BYTES,
          truncate: true,
        });
        return { kind: 'answered', statusCode: answer.status, retryAfter: answer.headers['retry-after'], durationMs: durationMs() };
      } catch (err) {
        if (signal.aborted) return { kind: 'aborted' };
        return { kind: 'failed', errorCode: err instanceof OutboundError ? err.code : 'OUTBOUND_NETWORK_ERROR', durationMs: durationMs() };
      }
    },
    /**
     * DESIGN §7 refuses private addresses at delivery time (the host is resolved then); a literal
     * private address or localhost is refused when the webhook is configured already, so the
     * mistake shows when it is made.
     */
    refusesOutright(rawUrl) {
      if (options.allowPrivateNetwork) return false;
      const host = new URL(rawUrl).hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
      return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isRefusedAddress(host));
    },
  };
}
