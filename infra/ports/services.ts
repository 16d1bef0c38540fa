import type { Config, Role } from '../config.js';
import type { Bus } from './bus.js';
import type { EventStore } from './event-store.js';
import type { Logger } from './logger.js';
import type { CheckpointStore, ReadStore } from './read-store.js';
import type { ProjectionRunner } from '../projection-runner.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { SealedBox } from '../auth/sealed-box.js';
import type { TokenService } from '../auth/tokens.js';
import type { Mailer } from './mailer.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { McpRuntime } from '../mcp/runtime.js';
import type { MessagingRuntime } from '../messaging/runtime.js';
import type { WebhooksRuntime } from '../messaging-webhooks/runtime.js';

/** What the composition root hands to routes and consumers. */
export interface Services {
  config: Config;
  role: Role;
  logger: Logger;
  eventStore: EventStore;
  readStore: ReadStore;
  /** Durable positions of consumers and the relay (the embedded read store's are in memory). */
  checkpoints: CheckpointStore;
  bus: Bus;
  projections: ProjectionRunner;
  tokens: TokenService;
  auth: Authenticator;
  /** Encrypts secrets that must be read back (provider credentials). */
  sealedBox: SealedBox;
  mailer: Mailer;
  rateLimiter: RateLimiter;
  /** MCP connections and call waiters of this process. */
  mcp: McpRuntime;
  /** Messaging provider adapters and delivery timers of this process. */
  messaging: MessagingRuntime;
  /** Webhook delivery timers of this process. */
  webhooks: WebhooksRuntime;
  now(): Date;
  newId(): string;
}
