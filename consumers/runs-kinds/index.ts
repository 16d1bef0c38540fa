import { PURE_NODE_KINDS, conditionKind, RunInputError, type NodeKind, type NodeKindContext, type RunNode } from '../../domain/runs/index.js';
import { llmKind, type LlmKindPorts } from './llm.js';
import { webhookKind, type WebhookKindPorts } from './webhook.js';
import { mcpToolKind, type McpToolKindPorts } from './mcp-tool.js';
import { memoryKind, type MemoryKindPorts } from './memory.js';
import { workflowOnlyKinds } from './workflow.js';

/**
 * Every node kind the run worker executes, keyed by `data.nodeType`: the pure kinds of
 * domain/runs plus the ones that do I/O (llm, webhook) and the ones that need a capability the
 * worker passes in the context (mcp_tool, memory).
 *
 * What the worker must put in the context besides NodeKindContext: `orgId` (string, or null for a
 * personal flow) — whose LLM credentials and budget an llm node uses. A missing `orgId` fails the
 * node rather than silently spending the service-wide key.
 *
 * Errors a kind throws all carry a stable `code` and a `message`: RunInputError (NodeKindError
 * below: WEBHOOK_HTTP_<status>, OUTBOUND_*, LLM_*), LlmProviderError (PROVIDER_*), DomainError
 * BUDGET_EXCEEDED (payment_required), and LlmAbortError when the run's signal aborted (`isLlmAbort`).
 */
export interface ExecutionContext extends NodeKindContext {
  orgId: string | null;
}

/** The key under which nodeKindsFor puts the kind for nodes whose `data.nodeType` is absent or unknown. */
export const DEFAULT_NODE_KIND = 'default';

/**
 * The fallback for a node without a known `data.nodeType` (seed-style nodes carry only `llm`,
 * `model`, `prompt`…), decided from its data when it runs: `llm` set → llm; else
 * `webhookConfig.url` set → webhook; else pass-through of its input (its conditions still
 * choose the edges, like a condition node).
 */
export function fallbackKindOf(data: RunNode['data'], kinds: Record<string, NodeKind>): NodeKind {
  if (typeof data.llm === 'string' && data.llm.trim() !== '') return kinds.llm;
  if (data.webhookConfig && typeof data.webhookConfig.url === 'string' && data.webhookConfig.url !== '') return kinds.webhook;
  return conditionKind;
}

/** Every port a node kind uses; the container builds it once per process. */
export type NodeKindPorts = LlmKindPorts & WebhookKindPorts & McpToolKindPorts & MemoryKindPorts;

export function nodeKindsFor(ports: NodeKindPorts): Record<string, NodeKind> {
  const kinds: Record<string, NodeKind> = {};
  for (const kind of PURE_NODE_KINDS) kinds[kind.type] = kind;
  kinds.llm = llmKind(ports);
  kinds.webhook = webhookKind(ports);
  kinds.mcp_tool = mcpToolKind(ports);
  kinds.memory = memoryKind(ports);
  for (const kind of workflowOnlyKinds) kinds[kind.type] = kind;
  kinds[DEFAULT_NODE_KIND] = {
    // The type it reports is the pass-through's; execute picks the real behaviour from the data.
    type: conditionKind.type,
    execute: (node, context) => fallbackKindOf(node.data, kinds).execute(node, context),
  };
  return kinds;
}

/** The kind for a node: by `data.nodeType`, else the documented fallback. */
export function nodeKindFor(kinds: Record<string, NodeKind>, node: RunNode): NodeKind {
  const type: unknown = node.data.nodeType;
  if (typeof type === 'string' && type !== DEFAULT_NODE_KIND && Object.hasOwn(kinds, type)) return kinds[type];
  return kinds[DEFAULT_NODE_KIND];
}

export { answerPromptCondition } from './llm.js';
export { NodeKindError } from './webhook.js';
export type { PromptConditionAnswer } from './llm.js';
export { RunInputError };
