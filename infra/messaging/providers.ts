import type { Config } from '../config/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { MessagingProvider, MessagingProviders } from '../../ports/messaging-provider.js';
import { embeddedProvider } from './embedded-provider.js';
import { wahaInbound } from './waha-inbound.js';
import { wahaProvider } from './waha-provider.js';

type MessagingConfig = Pick<Config, 'MESSAGING_WAHA_URL' | 'MESSAGING_WAHA_API_KEY' | 'MESSAGING_WAHA_WEBHOOK_HMAC_KEY' | 'MESSAGING_WAHA_TIMEOUT_MS'>;

/** The providers from configuration: the embedded network always, WAHA when MESSAGING_WAHA_URL is set. */
export function createMessagingProviders(config: MessagingConfig): MessagingProviders {
  const embedded = embeddedProvider();
  const inbound = wahaInbound(config.MESSAGING_WAHA_WEBHOOK_HMAC_KEY);
  let waha: MessagingProvider | null = null;
  return {
    available(kind) {
      return kind === 'embedded' || Boolean(config.MESSAGING_WAHA_URL);
    },
    provider(kind) {
      if (kind === 'embedded') return embedded;
      if (!config.MESSAGING_WAHA_URL) {
        throw new DomainError('MESSAGING_PROVIDER_UNAVAILABLE', 'the waha provider is not configured (MESSAGING_WAHA_URL)', 'invalid', { field: 'body.provider' });
      }
      waha ??= wahaProvider({
        baseUrl: config.MESSAGING_WAHA_URL,
        apiKey: config.MESSAGING_WAHA_API_KEY,
        hmacKey: config.MESSAGING_WAHA_WEBHOOK_HMAC_KEY,
        timeoutMs: config.MESSAGING_WAHA_TIMEOUT_MS,
      });
      return waha;
    },
    inbound: () => inbound,
    async close() {},
  };
}
