import { z } from 'zod';
import { priceTable } from '../llm/prices.js';
import { documentsConfigShape } from './documents.js';
import { mcpConfigShape } from './mcp.js';
import { memoryConfigShape } from './memory.js';
import { messagingConfigShape } from './messaging.js';
import { webhooksConfigShape } from './messaging-webhooks.js';
import { kvConfigShape } from './kv.js';
import { cliLlmConfigShape } from './cli-llm.js';
import { terminalsConfigShape } from './terminals.js';
import { agentsConfigShape } from './agents.js';
import { extensionConfigShape } from './extension.js';
import { assistantConfigProblems, assistantConfigShape } from './assistant.js';
import { telemetryConfigProblems, telemetryConfigShape } from './telemetry.js';
import { rateLimiterConfigShape } from './rate-limiter.js';
import { appsConfigShape } from './apps.js';
import { objectsConfigShape } from './objects.js';
import { careersConfigShape } from './careers.js';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalUrl = (protocols: RegExp) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || protocols.test(v), { message: `must start with ${protocols.source.replace(/[\\^()]/g, '')}` });

/** Every environment variable the service reads; README's configuration table mirrors this. */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EVENTSTORE_URL: optionalUrl(/^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover):\/\//),
  MONGODB_URL: optionalUrl(/^mongodb(\+srv)?:\/\//),
  MONGODB_DB: z.string().regex(/^[A-Za-z0-9_-]{1,60}$/).default('flowsvc'),
  KAFKA_BROKERS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((b) => b.trim()).filter(Boolean) : undefined))
    .refine((v) => v === undefined || v.every((b) => /^[^:\s]+:\d{1,5}$/.test(b)), { message: 'must be host:port[,host:port…]' }),
  KAFKA_TOPIC_PREFIX: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/).default('flowsvc'),
  KAFKA_PARTITIONS: positiveInt(3),
  KAFKA_CLIENT_ID: z.string().min(1).default('flowsvc'),
  /** Public integration events (CloudEvents on `<prefix>.public.<tenant>`, issue 32); only with KAFKA_BROKERS. */
  PUBLIC_EVENTS: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  BODY_LIMIT_BYTES: positiveInt(1_048_576),
  READ_YOUR_WRITES_TIMEOUT_MS: z.coerce.number().int().min(0).default(5000),
  COMMAND_MAX_ATTEMPTS: positiveInt(25),
  /** A flow's or workflow's folded state is snapshotted once its stream is this many events past the last snapshot; 0: never. */
  SNAPSHOT_EVERY: z.coerce.number().int().min(0).default(500),
  /** Embedded event store: `fsync` acknowledges an append once the disk has it; `process` once the OS has it (README: Durability). */
  DURABILITY: z.enum(['fsync', 'process']).default('fsync'),
  /** Embedded read models: `sqlite` keeps them on disk (DATA_DIR/read-models.db) and resumes at restart; `memory` rebuilds them from the log at every start. */
  READ_MODELS: z.enum(['sqlite', 'memory']).default('sqlite'),
  /** SQLite page cache of the embedded read models, in MB: what they may hold in memory. */
  READ_MODEL_CACHE_MB: positiveInt(32),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  CONSUMER_MAX_ATTEMPTS: positiveInt(5),
  /** A worker takes over the Kafka relay within this long of the relaying worker's death (lease of half this). */
  RELAY_FAILOVER_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),

  // Identity and access
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_TTL_SECONDS: positiveInt(3600),
  /** 32 bytes, base64 or hex: encrypts provider credentials at rest. Generated under DATA_DIR when unset. */
  ENCRYPTION_KEY: z.string().optional(),
  PUBLIC_URL: optionalUrl(/^https?:\/\//),
  // Unset: the console this service serves at its own root (PUBLIC_URL, else http://HOST:PORT); see loadConfig.
  FRONTEND_URL: optionalUrl(/^https?:\/\//),
  SMTP_URL: optionalUrl(/^smtps?:\/\//),
  MAIL_FROM: z.string().min(3).default('Flow service <no-reply@localhost>'),
  PASSWORD_RESET_TTL_MINUTES: positiveInt(30),
  /** How long the link in an email verification mail works. */
  EMAIL_VERIFICATION_TTL_HOURS: positiveInt(48),
  /** A password account that has not verified its email this long after registering expires (no login; its email can be registered again). */
  UNVERIFIED_ACCOUNT_TTL_HOURS: positiveInt(168),
  INVITATION_TTL_HOURS: positiveInt(168),
  DEVICE_CODE_TTL_SECONDS: positiveInt(900),
  DEVICE_POLL_INTERVAL_SECONDS: positiveInt(5),
  CLI_TOKEN_TTL_DAYS: positiveInt(90),
  RATE_LIMIT_AUTH_PER_MINUTE: positiveInt(20),
  /** Service operators (comma-separated emails): only they may use the /admin routes. */
  ADMIN_EMAILS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((e) => e.trim().toLowerCase()).filter(Boolean) : [])),
  ADMIN_REBUILD_WAIT_MS: z.coerce.number().int().min(0).default(30_000),

  // Execution and LLM providers (credentials here are the service-wide fallback after user and organization ones)
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().regex(/^https?:\/\//).default('https://api.openai.com/v1'),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.string().regex(/^https?:\/\//).default('https://api.anthropic.com'),
  GEMINI_API_KEY: z.string().optional(),
  GEMINI_BASE_URL: z.string().regex(/^https?:\/\//).default('https://generativelanguage.googleapis.com'),
  /** JSON overriding the price table: {"openai": {"gpt-4o": {"input": 2.5e-6, "output": 1e-5, "cachedInput": 1.25e-6}}} (USD per token). */
  LLM_PRICES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return undefined;
      try {
        return JSON.parse(v) as Record<string, Record<string, Record<string, number>>>;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    }),
  LLM_TIMEOUT_MS: positiveInt(60_000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Outbound HTTP (webhook nodes, messaging webhooks, MCP over HTTP) may reach private and loopback addresses. */
  ALLOW_PRIVATE_NETWORK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Outbound HTTP (webhook nodes, messaging webhooks) keeps connections open per checked address and reuses them. */
  OUTBOUND_KEEP_ALIVE: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  RUN_CONCURRENCY: positiveInt(4),
  /** Async runs one worker process executes at once; past it the worker claims no more until one ends. */
  WORKER_MAX_RUNS: positiveInt(64),
  NODE_TIMEOUT_MS: positiveInt(120_000),
  /** A whole run, counted from its request (queue time included); past it the run ends `timed_out`. */
  RUN_TIMEOUT_MS: positiveInt(600_000),
  /** A queued run no worker claimed within this is claimed (or timed out) by the workers' sweep. */
  RUN_CLAIM_TIMEOUT_MS: positiveInt(30_000),
  /** Finished runs keep their node events this many days, then are cut down to a summary (0: no age bound); an organization may set its own. */
  RUN_HISTORY_KEEP_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  /** …and only the newest this many finished runs of each flow keep them (0: no count bound). */
  RUN_HISTORY_KEEP_LAST: z.coerce.number().int().min(0).max(100_000_000).default(10_000),
  /** How often the workers sweep for runs past their retention. */
  RUN_HISTORY_SWEEP_MS: positiveInt(600_000),
  /** Workers record a heartbeat event this often; a worker silent for three intervals is dead and its runs are taken over. */
  WORKER_HEARTBEAT_MS: positiveInt(5_000),
  /** Bearer token a Prometheus scraper presents at GET /api/metrics (16–256 characters); unset: operators' credentials only. */
  METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || (v.length >= 16 && v.length <= 256), { message: 'must be 16 to 256 characters' }),
  GOOGLE_CLIENT_ID: z.string().optional(),
  GOOGLE_CLIENT_SECRET: z.string().optional(),
  GOOGLE_ISSUER: z.string().regex(/^https?:\/\//).default('https://accounts.google.com'),
  GITHUB_CLIENT_ID: z.string().optional(),
  GITHUB_CLIENT_SECRET: z.string().optional(),
  GITHUB_AUTHORIZE_URL: z.string().regex(/^https?:\/\//).default('https://github.com/login/oauth/authorize'),
  GITHUB_TOKEN_URL: z.string().regex(/^https?:\/\//).default('https://github.com/login/oauth/access_token'),
  GITHUB_API_URL: z.string().regex(/^https?:\/\//).default('https://api.github.com'),

  ...mcpConfigShape,
  ...messagingConfigShape,
  ...documentsConfigShape,
  ...memoryConfigShape,
  ...webhooksConfigShape,
  ...kvConfigShape,
  ...terminalsConfigShape,
  ...agentsConfigShape,
  ...cliLlmConfigShape,
  ...extensionConfigShape,
  ...assistantConfigShape,
  ...rateLimiterConfigShape,
  ...appsConfigShape,
  ...objectsConfigShape,
  ...careersConfigShape,
  ...telemetryConfigShape,
});

export type Config = Omit<z.infer<typeof configSchema>, 'FRONTEND_URL'> & {
  /** Where the links the service mails and prints lead (reset, invitation, device page, social landing): always set after loadConfig. */
  FRONTEND_URL: string;
};
export type Role = 'all' | 'api' | 'projector' | 'worker';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The console served by this very process (api/console.ts): the public URL, else the listening address. */
function ownConsoleUrl(config: { PUBLIC_URL?: string; HOST: string; PORT: number }): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL.replace(/\/+$/, '');
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message} (got ${JSON.stringify(env[String(i.path[0])])})`));
  }
  try {
    // Checked now so that a bad price entry stops the start instead of failing the first paid call.
    priceTable(parsed.data.LLM_PRICES);
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  const problems = [...assistantConfigProblems(parsed.data), ...telemetryConfigProblems(parsed.data)];
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...parsed.data, FRONTEND_URL: parsed.data.FRONTEND_URL ?? ownConsoleUrl(parsed.data) };
}

export function parseRole(argv: string[]): Role {
  const index = argv.findIndex((a) => a === '--role' || a.startsWith('--role='));
  if (index === -1) return 'all';
  const value = argv[index].includes('=') ? argv[index].split('=')[1] : argv[index + 1];
  if (value === 'api' || value === 'projector' || value === 'worker' || value === 'all') return value;
  throw new ConfigError([`--role: must be one of api, projector, worker, all (got ${JSON.stringify(value)})`]);
}
