import type { Services } from '../services.js';

/** What the webhooks context keeps per process (delivery timers); closed with the services. */
export interface WebhooksRuntime {
  close(): Promise<void>;
}

export function createWebhooksRuntime(_services: () => Services): WebhooksRuntime {
  return { async close() {} };
}
