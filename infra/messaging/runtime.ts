import type { Services } from '../services.js';

/** What the messaging context keeps per process (provider adapters, delivery timers); closed with the services. */
export interface MessagingRuntime {
  close(): Promise<void>;
}

export function createMessagingRuntime(_services: () => Services): MessagingRuntime {
  return { async close() {} };
}
