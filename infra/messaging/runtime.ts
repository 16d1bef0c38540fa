import type { ProviderKind } from '../../domain/messaging/events.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { MessagingProvider } from '../ports/messaging-provider.js';
import type { Services } from '../ports/services.js';
import { embeddedProvider } from './embedded-provider.js';
import { wahaProvider } from './waha-provider.js';

/** What the messaging context keeps per process: the provider adapters (stateless; every fact lives in events). */
export interface MessagingRuntime {
  /** The adapter for a provider kind; throws MESSAGING_PROVIDER_UNAVAILABLE when it is not configured. */
  provider(kind: ProviderKind): MessagingProvider;
  available(kind: ProviderKind): boolean;
  close(): Promise<void>;
}

export function createMessagingRuntime(services: () => Services): MessagingRuntime {
  const embedded = embeddedProvider();
  let waha: MessagingProvider | null = null;
  const runtime: MessagingRuntime = {
    available(kind) {
      return kind === 'embedded' || Boolean(services().config.MESSAGING_WAHA_URL);
    },
    provider(kind) {
      if (kind === 'embedded') return embedded;
      const config = services().config;
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
    async close() {},
  };
  return runtime;
}
