import { createHmac, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { EmbeddedBus } from '../infra/bus/embedded.js';
import { SqliteCheckpointStore } from '../infra/checkpoints/sqlite.js';
import { SqliteLeaseStore } from '../infra/checkpoints/sqlite-lease.js';
import { DocumentLeaseStore } from '../infra/bus/relay-lease.js';
import { CountingDeadLetters } from '../infra/bus/dead-letters.js';
import { eventStoreDeadLetters } from './dead-letters.js';
import type { LeaseStore } from '../ports/lease.js';
import { unavailableDependency } from '../infra/availability/classify.js';
import type { Config, Role } from '../infra/config/index.js';
import { SqliteEventStore } from '../infra/event-store/sqlite.js';
import { UpcastingEventStore } from '../infra/event-store/upcasting.js';
import { allUpcastersWith } from '../domain/upcasters.js';
import { appendOnlyStoredEvents, sqliteStoredEvents } from '../infra/event-store/stored-events.js';
import { allRetentionPolicies } from '../domain/retention.js';

/** How often the embedded log drops expired events of idle operational streams (active ones are trimmed on append). */
const RETENTION_SWEEP_MS = 3600_000;
import type { Bus } from '../ports/bus.js';
import type { IntegrationPublisher } from '../ports/integration.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { CheckpointStore, ReadStore } from '../ports/read-store.js';
import { ProjectionRunner } from './projection-runner.js';
import { configureCommands } from '../commands/handle.js';
import { configureSnapshots } from '../commands/snapshots.js';
import { MemoryReadStore } from '../infra/read-store/memory.js';
import { SqliteReadStore } from '../infra/read-store/sqlite.js';
import type { Services } from '../ports/services.js';
import { Authenticator } from '../infra/auth/authenticator.js';
import { CachedCredentialLookup } from '../infra/auth/cached-credentials.js';
import { loadOrCreateKey } from '../infra/auth/key-material.js';
import { SealedBox } from '../infra/auth/sealed-box.js';
import { TokenService } from '../infra/auth/tokens.js';
import { socialProviders } from '../infra/auth/social/index.js';
import { OutboxMailer } from '../infra/mailer/outbox.js';
import type { Mailer } from '../ports/mailer.js';
import { RateLimiter } from '../infra/rate-limiter/memory.js';
import { allProjectors } from '../projections/index.js';
import { memoryPorts } from './memory-ports.js';
import { credentialLookup } from '../projections/users-auth.js';
import { userStreamId } from '../domain/users/index.js';
import { userLlmCredentials } from './llm-user-credentials.js';
import { readUserLlmCredentials } from '../projections/users-llm-credentials.js';
import { createMcpRuntime } from '../infra/mcp/runtime.js';
import { createMcpClient } from '../infra/mcp/client.js';
import { createMcpServerEndpoint } from '../infra/mcp-server/server.js';
import { systemAddressResolver } from '../infra/mcp/address-resolver.js';
import { createKvChecker } from '../infra/kv/index.js';
import { mcpReadModel } from '../projections/mcp.js';
import { createMessagingProviders } from '../infra/messaging/providers.js';
import { createWebhooksRuntime } from './messaging-webhooks-runtime.js';
import { createLlmRegistry } from '../infra/llm/registry.js';
import { createOutboundHttp } from '../infra/http/outbound.js';
import { createRunExecutor, RunExecutions, type RunEnginePorts } from '../consumers/runs-executor.js';
import { createMetricsRegistry } from '../infra/metrics/registry.js';
import { instrumentLlmGateway } from '../infra/metrics/llm.js';
import { traceLlmGateway } from '../infra/telemetry/llm.js';
import { contentRecording } from '../commands/telemetry.js';
import { readOrgLlmCredentials } from '../projections/orgs-queries.js';
import { runRecoveryQueries } from '../projections/runs.js';
import { workflowQueries } from '../projections/workflows.js';
import { createWorkflowTimers } from '../consumers/workflows-timers.js';
import { createStreamSignals } from '../infra/stream-signals/subscription.js';
import { TERMINAL_CATEGORY } from '../domain/terminals/index.js';
import { createPdfReader } from '../infra/pdf/unpdf.js';
import { createHtmlReader } from '../infra/html/readable.js';
import { createObjectStore } from '../infra/object-store/index.js';
import { DocumentKeyTable, KeyTableVault, SqliteKeyTable } from '../infra/personal-data/vault.js';
import { createGptTokenizer } from '../infra/tokenizer/gpt-tokenizer.js';
import { skillsReadModel } from '../projections/skills.js';
import { withOwnerCheck } from './skills-owner-check.js';
import { assistantReads } from '../projections/assistant.js';
import { createAppDelivery } from '../infra/apps/builder.js';
import { localWork } from '../ports/local-work.js';

/**
 * The composition root: each port gets its distributed adapter when its variable is set and the
 * embedded one otherwise. Business code never sees which. Distributed adapters are imported only
 * when configured: their clients (EventStoreDB's gRPC, MongoDB, kafkajs, Redis, S3, SMTP) cost about
 * a second of start-up that the embedded default never uses.
 */
export async function buildServices(config: Config, role: Role, logger: Logger, options: { clock?: Clock } = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  // This service's worker identity: a restarted process, or a service rebuilt in place, is a different worker (crash resume).
  const localWorkerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const rawEventStore = config.EVENTSTORE_URL
    ? new (await import('../infra/event-store/eventstoredb.js')).EventStoreDbEventStore(config.EVENTSTORE_URL, { retention: allRetentionPolicies })
    : new SqliteEventStore(join(config.DATA_DIR, 'events.db'), { retention: allRetentionPolicies, now: () => clock.now(), sweepIntervalMs: RETENTION_SWEEP_MS, durability: config.DURABILITY });
  // Before the store: reading flow events written with node secrets in clear seals them (domain/flows/upcasters.ts).
  const masterKey = loadOrCreateKey(config.ENCRYPTION_KEY, config.DATA_DIR, 'encryption.key');
  const sealedBox = new SealedBox(masterKey);
  const eventStore: EventStore = new UpcastingEventStore(rawEventStore, allUpcastersWith({ sealBox: (plaintext) => sealedBox.seal(plaintext) }));
  // The handler's folded-state cache and its settings belong to this store, so to this service.
  configureCommands(eventStore, { maxAttempts: config.COMMAND_MAX_ATTEMPTS });
  configureSnapshots(eventStore, { every: config.SNAPSHOT_EVERY });

  // On disk only where one process projects into it (the whole service); the embedded split's
  // roles keep private in-memory read models, as each projects for itself.
  const readStore: ReadStore = config.MONGODB_URL
    ? await (await import('../infra/read-store/mongo.js')).MongoReadStore.connect(config.MONGODB_URL, config.MONGODB_DB, { log: (message, detail) => logger.warn(detail, message) })
    : config.READ_MODELS === 'sqlite' && role === 'all'
      ? new SqliteReadStore(join(config.DATA_DIR, 'read-models.db'), { cacheMb: config.READ_MODEL_CACHE_MB })
      : new MemoryReadStore();

  // Consumers and the relay must not forget their positions on restart, whatever the read store.
  const stateDb = config.MONGODB_URL
    ? null
    : rawEventStore instanceof SqliteEventStore ? rawEventStore.db : new SqliteEventStore(join(config.DATA_DIR, 'state.db'), { durability: config.DURABILITY }).db;
  const checkpoints: CheckpointStore = stateDb ? new SqliteCheckpointStore(stateDb) : readStore.checkpoints;
  // Which worker relays to Kafka: a lease kept beside the checkpoints (infra/bus/relay-leader.ts).
  const leases: LeaseStore = stateDb ? new SqliteLeaseStore(stateDb) : new DocumentLeaseStore(readStore.collection('_leases'));
  const relayHolder = `${role}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // A consumer's event that fails on every attempt becomes a `deadletter-<id>` stream (GET /admin/dead-letters).
  const deadLetters = new CountingDeadLetters(eventStoreDeadLetters(eventStore, () => clock.now()));

  const bus: Bus = config.KAFKA_BROKERS
    ? new (await import('../infra/bus/kafka.js')).KafkaBus({
        brokers: config.KAFKA_BROKERS,
        clientId: config.KAFKA_CLIENT_ID,
        topicPrefix: config.KAFKA_TOPIC_PREFIX,
        partitions: config.KAFKA_PARTITIONS,
        logger,
        relay: { eventStore, checkpoints, lease: { store: leases, holder: relayHolder, failoverMs: config.RELAY_FAILOVER_MS } },
        retry: { maxAttempts: config.CONSUMER_MAX_ATTEMPTS },
        deadLetters,
      })
    : new EmbeddedBus(eventStore, checkpoints, logger, { retry: { maxAttempts: config.CONSUMER_MAX_ATTEMPTS }, deadLetters });

  // Public integration events need Kafka (README, "Public integration events").
  const integration: IntegrationPublisher | null =
    config.KAFKA_BROKERS && config.PUBLIC_EVENTS
      ? new (await import('../infra/integration/kafka.js')).KafkaIntegrationPublisher({
          brokers: config.KAFKA_BROKERS,
          clientId: config.KAFKA_CLIENT_ID,
          topicPrefix: config.KAFKA_TOPIC_PREFIX,
          partitions: config.KAFKA_PARTITIONS,
          publicUrl: config.PUBLIC_URL,
          logger,
        })
      : null;

  // An in-memory read store is private to its process, so whoever serves reads must project.
  const projectsHere = role === 'all' || role === 'projector' || (role === 'api' && !config.MONGODB_URL);
  const projections = new ProjectionRunner(eventStore, readStore, allProjectors, logger.child({ component: 'projections' }), projectsHere ? 'local' : 'remote');

  const now = () => clock.now();
  // Per process (Prometheus scrapes each): HTTP, node and provider timings, plus gauges read at scrape time.
  const metrics = createMetricsRegistry({
    clock, role, processId: localWorkerId,
    sources: {
      deadLetters: () => deadLetters.snapshot(),
      projections: async () => (await projections.status()).map((p) => ({ name: p.name, lag: p.lag })),
      eventLogHead: () => eventStore.headPosition(),
    },
  });
  const tokens = new TokenService(loadOrCreateKey(config.JWT_SECRET, config.DATA_DIR, 'jwt.key'), config.JWT_TTL_SECONDS, clock);
  const mailer: Mailer = config.SMTP_URL ? new (await import('../infra/mailer/smtp.js')).SmtpMailer(config.SMTP_URL, config.MAIL_FROM, logger) : new OutboxMailer(config.DATA_DIR, logger, now);
  // One keep-alive pool per service for webhook nodes and messaging webhooks (pinned per checked address).
  const outbound = createOutboundHttp({ keepAlive: config.OUTBOUND_KEEP_ALIVE });

  // A read store in another process costs a round trip per request; the log says when a user changed.
  const credentials = config.MONGODB_URL
    ? new CachedCredentialLookup(credentialLookup(readStore), async (userId) => (await eventStore.readStream(userStreamId(userId), { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? null)
    : credentialLookup(readStore);

  const services: Services = {
    config, role, logger, unavailableDependency, eventStore, readStore, checkpoints, bus, integration, projections,
    tokens, auth: new Authenticator(tokens, credentials, clock, { unverifiedAccountTtlHours: config.UNVERIFIED_ACCOUNT_TTL_HOURS }), sealedBox, mailer, rateLimiter: config.RATE_LIMIT_REDIS_URL ? await (await import('../infra/rate-limiter/redis.js')).RedisRateLimiter.connect(config.RATE_LIMIT_REDIS_URL, config.RATE_LIMIT_REDIS_PREFIX, logger) : new RateLimiter(clock), social: socialProviders(config),
    now, newId: () => randomUUID(),
    storedEvents: rawEventStore instanceof SqliteEventStore ? sqliteStoredEvents(rawEventStore) : appendOnlyStoredEvents(rawEventStore),
    mcp: createMcpRuntime(createMcpClient(config)),
    mcpReadModel: mcpReadModel(readStore),
    mcpServer: createMcpServerEndpoint({ name: 'flow-automation-service', version: '0.1.0' }),
    resolver: systemAddressResolver,
    kv: createKvChecker(config),
    messaging: createMessagingProviders(config),
    webhooks: createWebhooksRuntime({ config, logger, clock, eventStore, readStore, sealedBox, projectsLocally: projections.mode === 'local', outbound }),
    memory: memoryPorts(config, eventStore, readStore, logger, () => randomUUID()),
    // Metrics, then a span per provider call (prompts on spans only for organizations that opted in, re-read every 10 s).
    llm: traceLlmGateway(instrumentLlmGateway(createLlmRegistry({
      config,
      logger,
      credentials: {
        organization: (orgId) => readOrgLlmCredentials({ readStore, sealedBox }, orgId),
        // The log first only where the read store is a server away; the in-memory one answers faster than a log read.
        user: config.MONGODB_URL ? userLlmCredentials({ eventStore, readStore, sealedBox }) : (userId) => readUserLlmCredentials({ readStore, sealedBox }, userId),
      },
    }), metrics), contentRecording(eventStore, 10_000)),
    outbound,
    runs: createRunExecutor(() => runEngine, localWorkerId),
    runRecovery: runRecoveryQueries(readStore),
    workflowQueries: workflowQueries(readStore),
    workflowTimers: createWorkflowTimers({
      eventStore, logger, clock: { now: () => services.now() }, queries: workflowQueries(readStore), localWorkerId, heartbeatMs: config.WORKER_HEARTBEAT_MS,
      workerPresence: (workerId) => services.runRecovery.workerPresence(workerId),
    }),
    streamSignals: createStreamSignals({ eventStore, categories: [TERMINAL_CATEGORY, 'workflow', 'assistantconv', 'agentsession', 'run'], maxWaiters: config.REMOTE_MAX_WAITERS, logger }),
    metrics,
    pdf: createPdfReader({ timeoutMs: config.PDF_READ_TIMEOUT_MS }),
    html: createHtmlReader(),
    objects: await createObjectStore(config, () => services.now()),
    // Careers' personal-data keys: outside the log and outside any projection (a rebuild keeps them).
    personalData: new KeyTableVault(
      stateDb ? new SqliteKeyTable(stateDb) : new DocumentKeyTable(readStore.collection('_personal_keys')),
      sealedBox,
      createHmac('sha256', masterKey).update('personal-data blind index').digest(),
    ),
    tokenizer: createGptTokenizer(),
    skills: config.MONGODB_URL ? withOwnerCheck(eventStore, skillsReadModel(readStore)) : skillsReadModel(readStore),
    assistantReads: assistantReads(readStore),
    agentTurns: localWork(),
    assistantReplies: localWork(),
    evaluations: localWork(),
    appDelivery: createAppDelivery({ timeoutMs: config.APPS_BUILD_TIMEOUT_MS, maxOutputBytes: config.APPS_BUILD_MAX_OUTPUT_BYTES, cacheEntries: config.APPS_SITE_CACHE_ENTRIES }),
  };
  // The run engine's ports, once the services it shares exist; `now` read late so a test may move time.
  const runEngine: RunEnginePorts = {
    eventStore, logger, llm: services.llm, outbound: services.outbound, memory: services.memory, projections,
    clock: { now: () => services.now() }, newId: () => services.newId(), settings: config, secrets: sealedBox, metrics,
    mcp: { eventStore, config, mcp: services.mcp, now: () => services.now() },
    skills: services.skills,
    executions: new RunExecutions(),
  };
  return services;
}

export async function closeServices(services: Services): Promise<void> {
  // Contexts first: they stop child processes and timers that would otherwise append after the store closed.
  await services.evaluations.stopAll(5_000);
  await services.mcp.close();
  await services.messaging.close();
  await services.webhooks.close();
  await services.workflowTimers.close();
  await services.streamSignals.close();
  services.outbound.close?.();
  await services.rateLimiter.close();
  await services.bus.close();
  await services.integration?.close();
  await services.projections.stop();
  await services.readStore.close();
  await services.eventStore.close();
}
