import type { RouteDef } from '../route.js';
import { adminRoutes } from './operations.js';
import { deadLetterRoutes } from './operations-dead-letters.js';
import { aiRoutes } from './ai-flows.js';
import { connectionRoutes } from './flows-connections.js';
import { flowAuditRoutes } from './flows-audit.js';
import { flowSecretsAdminRoutes } from './flows-secrets.js';
import { flowRoutes } from './flows.js';
import { flowMcpRoutes } from './flows-mcp.js';
import { llmRoutes } from './llm.js';
import { nodeRoutes } from './flows-nodes.js';
import { triggerRoutes } from './flows-triggers.js';
import { apiKeyRoutes } from './users-api-keys.js';
import { authRoutes } from './users-auth.js';
import { cliRoutes } from './cli.js';
import { cliLlmRoutes } from './cli-llm.js';
import { telemetryRoutes } from './telemetry.js';
import { cliLlmCountRoutes } from './cli-llm-count.js';
import { healthRoutes } from './health.js';
import { orgRoutes } from './orgs.js';
import { probeRoutes } from './probes.js';
import { processingRoutes } from './runs.js';
import { runDiffRoutes } from './runs-diff.js';
import { runReplayRoutes } from './runs-replay.js';
import { runStopRoutes } from './runs-stop.js';
import { runStreamRoutes } from './runs-stream.js';
import { workflowStreamRoutes } from './workflows-stream.js';
import { evalRoutes } from './evals.js';
import { workflowRoutes } from './workflows.js';
import { publicTriggerRoutes } from './runs-public-triggers.js';
import { socialAuthRoutes } from './signins.js';
import { userRoutes } from './users.js';
import { mcpRoutes } from './mcp.js';
import { kvRoutes } from './kv.js';
import { messagingRoutes } from './messaging.js';
import { documentsRoutes } from './documents.js';
import { memoryRoutes } from './memory.js';
import { appRoutes } from './apps.js';
import { appFileRoutes } from './apps-files.js';
import { appBuilderRoutes } from './apps-builder.js';
import { appContractRoutes } from './apps-contract.js';
import { appVersionRoutes } from './apps-versions.js';
import { webhooksRoutes } from './messaging-webhooks.js';
import { terminalRoutes } from './terminals.js';
import { systemRoutes } from './system.js';
import { metricsRoutes } from './metrics.js';
import { integrationRoutes } from './integration.js';
import { hybridRoutes } from './hybrid.js';
import { appPreviewRoutes } from './apps-preview.js';
import { appDeployRoutes } from './apps-deploy.js';
import { skillRoutes } from './skills.js';
import { assistantRoutes } from './assistant.js';
import { agentRoutes } from './agents.js';
import { objectRoutes } from './objects.js';
import { careerRoutes } from './careers.js';
import { careerVacancyRoutes } from './careers-vacancies.js';
import { extensionRoutes } from './extension.js';
import { extensionAiRoutes } from './extension-ai.js';
import { extensionChatRoutes } from './extension-chats.js';
import { appInstanceRoutes } from './app-instances.js';
import { appInstanceFileRoutes } from './app-instances-files.js';

/** The whole route table: registration, validation and the OpenAPI document all come from it. */
export const allRoutes: RouteDef[] = [
  ...healthRoutes,
  ...authRoutes,
  ...socialAuthRoutes,
  ...userRoutes,
  ...apiKeyRoutes,
  ...orgRoutes,
  ...cliRoutes,
  ...cliLlmRoutes,
  ...telemetryRoutes,
  ...cliLlmCountRoutes,
  ...flowRoutes,
  ...flowMcpRoutes,
  ...nodeRoutes,
  ...connectionRoutes,
  ...triggerRoutes,
  ...flowAuditRoutes,
  ...processingRoutes,
  ...runDiffRoutes,
  ...runReplayRoutes,
  ...runStopRoutes,
  ...runStreamRoutes,
  ...evalRoutes,
  ...workflowRoutes,
  ...workflowStreamRoutes,
  ...publicTriggerRoutes,
  ...llmRoutes,
  ...aiRoutes,
  ...adminRoutes,
  ...flowSecretsAdminRoutes,
  ...deadLetterRoutes,
  ...mcpRoutes,
  ...kvRoutes,
  ...messagingRoutes,
  ...documentsRoutes,
  ...memoryRoutes,
  ...appRoutes,
  ...appFileRoutes,
  ...appBuilderRoutes,
  ...appContractRoutes,
  ...appVersionRoutes,
  ...webhooksRoutes,
  ...terminalRoutes,
  ...probeRoutes,
  ...systemRoutes,
  ...metricsRoutes,
  ...integrationRoutes,
  ...hybridRoutes,
  ...appPreviewRoutes,
  ...appDeployRoutes,
  ...skillRoutes,
  ...assistantRoutes,
  ...agentRoutes,
  ...objectRoutes,
  ...careerRoutes,
  ...careerVacancyRoutes,
  ...extensionRoutes,
  ...extensionAiRoutes,
  ...extensionChatRoutes,
  ...appInstanceRoutes,
  ...appInstanceFileRoutes,
];
