import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { EmbeddedBus } from './bus/embedded.js';
import { KafkaBus } from './bus/kafka.js';
import { SqliteCheckpointStore } from './checkpoints/sqlite.js';
import type { Config, Role } from './config.js';
import { EventStoreDbEventStore } from './event-store/eventstoredb.js';
import { SqliteEventStore } from './event-store/sqlite.js';
import { UpcastingEventStore } from './event-store/upcasting.js';
import { allUpcasters } from '../domain/upcasters.js';
import type { Bus } from './ports/bus.js';
import { systemClock, type Clock } from './ports/clock.js';
import type { EventStore } from './ports/event-store.js';
import type { Logger } from './ports/logger.js';
import type { CheckpointStore, ReadStore } from './ports/read-store.js';
import { ProjectionRunner } from './projection-runner.js';
import { MemoryReadStore } from './read-store/memory.js';
import { MongoReadStore } from './read-store/mongo.js';
import type { Services } from './ports/services.js';
import { Authenticator } from './auth/authenticator.js';
import { loadOrCreateKey } from './auth/key-material.js';
import { SealedBox } from './auth/sealed-box.js';
import { TokenService } from './auth/tokens.js';
import { OutboxMailer } from './mailer/outbox.js';
import { SmtpMailer } from './mailer/smtp.js';
import type { Mailer } from './ports/mailer.js';
import { RateLimiter } from './rate-limiter.js';
import { allProjectors } from '../projections/index.js';
import { createMcpRuntime } from './mcp/runtime.js';
import { createMessagingRuntime } from './messaging/runtime.js';
import { createWebhooksRuntime } from './messaging-webhooks/runtime.js';

/**
 * The composition root: each port gets its distributed adapter when its variable is set and the
 * embedded one otherwise. Business code never sees which.
 */
export async function buildServices(config: Config, role: Role, logger: Logger, options: { clock?: Clock } = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const rawEventStore = config.EVENTSTORE_URL
    ? new EventStoreDbEventStore(config.EVENTSTORE_URL)
    : new SqliteEventStore(join(config.DATA_DIR, 'events.db'));
  const eventStore: EventStore = new UpcastingEventStore(rawEventStore, allUpcasters);

  const readStore: ReadStore = config.MONGODB_URL
    ? await MongoReadStore.connect(config.MONGODB_URL, config.MONGODB_DB)
    : new MemoryReadStore();

  // Consumers and the relay must not forget their positions on restart, whatever the read store.
  const checkpoints: CheckpointStore = config.MONGODB_URL
    ? readStore.checkpoints
    : new SqliteCheckpointStore(
        rawEventStore instanceof SqliteEventStore ? rawEventStore.db : new SqliteEventStore(join(config.DATA_DIR, 'state.db')).db,
      );

  const bus: Bus = config.KAFKA_BROKERS
    ? new KafkaBus({
        brokers: config.KAFKA_BROKERS,
        clientId: config.KAFKA_CLIENT_ID,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        partitions: config.KAFKA_PARTITIONS,
        logger,
        relay: { eventStore, checkpoints },
        retry: { maxAttempts: config.CONSUMER_MAX_ATTEMPTS },
      })
    : new EmbeddedBus(eventStore, checkpoints, logger, { retry: { maxAttempts: config.CONSUMER_MAX_ATTEMPTS } });

  // An in-memory read store is private to its process, so whoever serves reads must project.
  const projectsHere = role === 'all' || role === 'projector' || (role === 'api' && !config.MONGODB_URL);
  const projections = new ProjectionRunner(eventStore, readStore, allProjectors, logger.child({ component: 'projections' }), projectsHere ? 'local' : 'remote');

  const now = () => clock.now();
  const tokens = new TokenService(loadOrCreateKey(config.JWT_SECRET, config.DATA_DIR, 'jwt.key'), config.JWT_TTL_SECONDS, now);
  const sealedBox = new SealedBox(loadOrCreateKey(config.ENCRYPTION_KEY, config.DATA_DIR, 'encryption.key'));
  const mailer: Mailer = config.SMTP_URL ? new SmtpMailer(config.SMTP_URL, config.MAIL_FROM, logger) : new OutboxMailer(config.DATA_DIR, logger, now);

  const services: Services = {
    config, role, logger, eventStore, readStore, checkpoints, bus, projections,
    tokens, auth: new Authenticator(tokens, readStore, now), sealedBox, mailer, rateLimiter: new RateLimiter(),
    now, newId: () => randomUUID(),
    // Getters: a runtime may need the other services, which exist only once this object does.
    mcp: createMcpRuntime(() => services),
    messaging: createMessagingRuntime(() => services),
    webhooks: createWebhooksRuntime(() => services),
  };
  return services;
}

export async function closeServices(services: Services): Promise<void> {
  // Contexts first: they stop child processes and timers that would otherwise append after the store closed.
  await services.mcp.close();
  await services.messaging.close();
  await services.webhooks.close();
  await services.bus.close();
  await services.projections.stop();
  await services.readStore.close();
  await services.eventStore.close();
}
