import type { RouteDef } from '../route.js';
import { adminRoutes } from './admin.js';
import { aiRoutes } from './ai.js';
import { connectionRoutes } from './connections.js';
import { flowAuditRoutes } from './flow-audit.js';
import { flowRoutes } from './flows.js';
import { llmRoutes } from './llm.js';
import { nodeRoutes } from './nodes.js';
import { triggerRoutes } from './triggers.js';
import { apiKeyRoutes } from './api-keys.js';
import { authRoutes } from './auth.js';
import { cliRoutes } from './cli.js';
import { healthRoutes } from './health.js';
import { orgRoutes } from './orgs.js';
import { probeRoutes } from './probes.js';
import { processingRoutes } from './processing.js';
import { publicTriggerRoutes } from './public-triggers.js';
import { socialAuthRoutes } from './social-auth.js';
import { userRoutes } from './users.js';
import { mcpRoutes } from './mcp.js';
import { kvRoutes } from './kv.js';
import { messagingRoutes } from './messaging.js';
import { documentsRoutes } from './documents.js';
import { memoryRoutes } from './memory.js';
import { webhooksRoutes } from './webhooks.js';

/** The whole route table: registration, validation and the OpenAPI document all come from it. */
export const allRoutes: RouteDef[] = [
  ...healthRoutes,
  ...authRoutes,
  ...socialAuthRoutes,
  ...userRoutes,
  ...apiKeyRoutes,
  ...orgRoutes,
  ...cliRoutes,
  ...flowRoutes,
  ...nodeRoutes,
  ...connectionRoutes,
  ...triggerRoutes,
  ...flowAuditRoutes,
  ...processingRoutes,
  ...publicTriggerRoutes,
  ...llmRoutes,
  ...aiRoutes,
  ...adminRoutes,
  ...mcpRoutes,
  ...kvRoutes,
  ...messagingRoutes,
  ...documentsRoutes,
  ...memoryRoutes,
  ...webhooksRoutes,
  ...probeRoutes,
];
