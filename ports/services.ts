import type { Config, Role } from '../infra/config/index.js';
import type { ConversationState } from '../domain/assistant/index.js';
import type { Bus } from './bus.js';
import type { IntegrationPublisher } from './integration.js';
import type { EventStore } from './event-store.js';
import type { Logger } from './logger.js';
import type { CheckpointStore, ReadStore } from './read-store.js';
import type { Projections } from './projections.js';
import type { MemoryPorts } from './memory.js';
import type { Authenticator, TokenIssuer } from './auth.js';
import type { SecretSealer } from './secret-sealer.js';
import type { StoredEvents } from './stored-events.js';
import type { Mailer } from './mailer.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SocialProviders } from './social.js';
import type { KvChecker } from './kv.js';
import type { McpReadModel, McpRuntime } from './mcp.js';
import type { McpServerEndpoint } from './mcp-server.js';
import type { AddressResolver } from './address-resolver.js';
import type { MessagingProviders } from './messaging-provider.js';
import type { MessagingWebhooks } from './messaging-webhooks.js';
import type { LlmGateway } from './llm.js';
import type { OutboundHttp } from './outbound-http.js';
import type { RunExecutor, RunRecoveryQueries } from './runs.js';
import type { StreamSignals } from './stream-signals.js';
import type { WorkflowQueries, WorkflowTimers } from './workflows.js';
import type { MetricsRegistry } from './metrics.js';
import type { PdfReader } from './pdf-text.js';
import type { HtmlReader } from './html-text.js';
import type { ObjectStore } from './object-store.js';
import type { PersonalDataVault } from './personal-data.js';
import type { Tokenizer } from './tokenizer.js';
import type { SkillsReadModel } from './skills.js';
import type { AssistantReads } from './assistant.js';
import type { AppDelivery } from './app-delivery.js';
import type { LocalWork } from './local-work.js';
import type { UnavailableDependency } from './availability.js';

/** What the composition root hands to routes and consumers. */
export interface Services {
  config: Config;
  role: Role;
  logger: Logger;
  /** Names the server an error says is down (503 instead of 500). */
  unavailableDependency: UnavailableDependency;
  eventStore: EventStore;
  readStore: ReadStore;
  /** Durable positions of consumers and the relay (the embedded read store's are in memory). */
  checkpoints: CheckpointStore;
  bus: Bus;
  /** Public integration events (CloudEvents per tenant, issue 32); null: not published (no Kafka, or PUBLIC_EVENTS=false). */
  integration: IntegrationPublisher | null;
  projections: Projections;
  tokens: TokenIssuer;
  auth: Authenticator;
  /** Encrypts secrets that must be read back (provider credentials). */
  sealedBox: SecretSealer;
  mailer: Mailer;
  rateLimiter: RateLimiter;
  /** Social sign-in providers (Google, GitHub) as configured. */
  social: SocialProviders;
  /** MCP connections and call waiters of this process. */
  mcp: McpRuntime;
  /** The MCP servers read model, for the reconnector's scan. */
  mcpReadModel: McpReadModel;
  /** The service's own MCP server (`/api/mcp`): exposed flows as tools over Streamable HTTP. */
  mcpServer: McpServerEndpoint;
  /** Host name resolution with address classes (the outbound rule's checks before a connection). */
  resolver: AddressResolver;
  /** Key-value store (Redis) checks and the server-redis launch. */
  kv: KvChecker;
  /** Messaging provider adapters of this process (and WAHA's inbound webhook). */
  messaging: MessagingProviders;
  /** Messaging webhook delivery timers and recovery sweep of this process. */
  webhooks: MessagingWebhooks;
  /** The memory context's ports (memory operations from the API and from memory nodes). */
  memory: MemoryPorts;
  /** The LLM port: providers with the caller's credentials, and the model catalogue. */
  llm: LlmGateway;
  /** HTTP calls to URLs users gave (webhook nodes), under the outbound rule. */
  outbound: OutboundHttp;
  /** The run engine of this process: synchronous runs from the API, the run worker, recovery. */
  runs: RunExecutor;
  /** What run recovery reads from the read side. */
  runRecovery: RunRecoveryQueries;
  /** Workflows: the timers this process holds (consumers/workflows-timers.ts) and the read side they scan. */
  workflowTimers: WorkflowTimers;
  workflowQueries: WorkflowQueries;
  /** This process's metrics: HTTP, node and provider timings (GET /metrics/performance, GET /metrics). */
  metrics: MetricsRegistry;
  /** PDF text, page by page (infra/pdf, unpdf): bounded in pages, characters and time. */
  pdf: PdfReader;
  /** Readable text of an HTML page (infra/html: Readability over linkedom; scripts never run). */
  html: HtmlReader;
  /** Uploaded files (CVs, PDFs, app files): DATA_DIR/objects or S3 (infra/object-store, OBJECT_STORE). */
  objects: ObjectStore;
  /** Per-subject keys for crypto-shredded personal data (careers), kept outside the log. */
  personalData: PersonalDataVault;
  /** App previews and deployments: builds (esbuild in a worker) and this process's built sites (infra/apps). */
  appDelivery: AppDelivery;
  /** The log as stored, beneath the upcasters: for the reseal of node secrets written in clear. */
  storedEvents: StoredEvents;
  /** Wakes long polls and SSE streams of this process when their stream gets an event (remote terminals). */
  streamSignals: StreamSignals;
  /** Token counting (gpt-tokenizer) for the skills' context summary. */
  tokenizer: Tokenizer;
  /** The skills read model for LLM nodes, agents and the assistant (skill injection, load_skill). */
  skills: SkillsReadModel;
  /** What the assistant's tools read (flows, runs) in the user's scope. */
  assistantReads: AssistantReads;
  /** Agent turns running in this service, by message id: what a cancel or a session's delete that lands here aborts at once. */
  agentTurns: LocalWork<unknown>;
  /** Assistant replies generating in this service, by reply id, each ending with the conversation as recorded (a cancel that lands here aborts it). */
  assistantReplies: LocalWork<{ state: ConversationState; position: number | null }>;
  /** Evaluations running in this service, by evaluation id (commands/evals-run.ts): started once, stopped with the service. */
  evaluations: LocalWork<void>;
  now(): Date;
  newId(): string;
}
