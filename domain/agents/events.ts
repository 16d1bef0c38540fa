import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Agents: `agent-<agentId>` streams (the definition); sessions in `agentsession-<sessionId>` streams (the conversation). */
export const agentStreamId = (agentId: string) => `agent-${agentId}`;
export const agentSessionStreamId = (sessionId: string) => `agentsession-${sessionId}`;

export const AGENT_LIMITS = {
  name: 100,
  description: 2_000,
  instructions: 50_000,
  tools: 32,
  skills: 100,
  messageChars: 100_000,
  attachments: 10,
  attachmentChars: 100_000,
} as const;

const jsonObject = z.record(z.string(), z.unknown());

export const agentToolRefSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('mcp_tool'), serverId: z.string().min(1).max(200), tool: z.string().min(1).max(200) }),
  z.object({ kind: z.literal('flow'), flowId: z.string().min(1).max(200), name: z.string().max(64).optional(), description: z.string().max(1000).optional() }),
  z.object({ kind: z.literal('memory') }),
  z.object({
    kind: z.literal('http'),
    webhookConfig: z.object({
      url: z.string().min(1).max(2048),
      method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
      headers: z.record(z.string(), z.string().max(4096)).default({}),
      name: z.string().max(64).optional(),
      description: z.string().max(1000).optional(),
      inputSchema: jsonObject.optional(),
      timeoutMs: z.number().int().min(100).max(120_000).optional(),
    }),
  }),
]);
export type AgentToolRef = z.infer<typeof agentToolRefSchema>;

export const agentLimitsSchema = z.object({
  maxIterations: z.number().int().min(1).max(50).default(8),
  maxToolCalls: z.number().int().min(0).max(200).default(32),
  maxTokens: z.number().int().min(1).max(1_000_000).nullable().default(null),
  timeoutMs: z.number().int().min(1_000).max(3_600_000).default(300_000),
});
export type AgentLimits = z.infer<typeof agentLimitsSchema>;

export const agentDefinitionSchema = z.object({
  name: z.string().min(1).max(AGENT_LIMITS.name),
  description: z.string().max(AGENT_LIMITS.description),
  provider: z.string().min(1).max(40),
  model: z.string().min(1).max(200),
  instructions: z.string().max(AGENT_LIMITS.instructions),
  tools: z.array(agentToolRefSchema).max(AGENT_LIMITS.tools),
  skills: z.array(z.string().min(1).max(200)).max(AGENT_LIMITS.skills),
  memory: z.object({ enabled: z.boolean(), scope: z.enum(['agent', 'user', 'session']) }).nullable(),
  limits: agentLimitsSchema,
  temperature: z.number().min(0).max(2).nullable(),
});
export type AgentDefinition = z.infer<typeof agentDefinitionSchema>;

const usageSchema = z.object({ promptTokens: z.number(), completionTokens: z.number(), cachedTokens: z.number(), cacheWriteTokens: z.number(), totalTokens: z.number() });
export type AgentUsage = z.infer<typeof usageSchema>;

export const AGENT_FINISH_REASONS = ['stop', 'length', 'content_filter', 'max_iterations', 'max_tool_calls', 'max_tokens', 'timeout', 'budget', 'cancelled', 'error', 'interrupted'] as const;
export type AgentFinishReason = (typeof AGENT_FINISH_REASONS)[number];

export const agentEventSchemas = {
  AgentCreated: agentDefinitionSchema.extend({ agentId: z.string(), ownerId: z.string(), orgId: z.string().nullable(), workspaceId: z.string().nullable(), at: z.string() }),
  AgentUpdated: agentDefinitionSchema.extend({ at: z.string() }),
  AgentDeleted: z.object({ at: z.string() }),
};
export type AgentEvent = EventsOf<typeof agentEventSchemas>;

export const agentSessionEventSchemas = {
  AgentSessionCreated: z.object({ sessionId: z.string(), agentId: z.string(), title: z.string().max(200).nullable(), ownerId: z.string(), orgId: z.string().nullable(), workspaceId: z.string().nullable(), at: z.string() }),
  /** A user's message: the turn starts (the session is busy until AgentMessageCompleted). */
  AgentMessageReceived: z.object({
    messageId: z.string(),
    content: z.string(),
    attachments: z.array(z.object({ name: z.string().max(200), mediaType: z.string().max(200), content: z.string() })),
    /** The process running the turn, and when it must be over (recovery of a crashed turn). */
    runner: z.string(),
    deadline: z.string(),
    /** What of the history the model sees: earlier messages dropped to fit the context budget. */
    context: z.object({ budgetTokens: z.number().int(), estimatedTokens: z.number().int(), includedMessageIds: z.array(z.string()), droppedMessageIds: z.array(z.string()) }),
    at: z.string(),
  }),
  /** Streamed text of the turn, in pieces as they were written to clients (several model deltas may make one). */
  AgentTextDelta: z.object({ messageId: z.string(), iteration: z.number().int(), text: z.string() }),
  /** One model call of the turn ended: its text and the tools it called. */
  AgentStepCompleted: z.object({
    messageId: z.string(),
    iteration: z.number().int(),
    text: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string(), input: jsonObject })),
    usage: usageSchema,
    cost: z.number(),
    model: z.string(),
    llmFinishReason: z.string(),
    at: z.string(),
  }),
  AgentToolCalled: z.object({ messageId: z.string(), iteration: z.number().int(), toolCallId: z.string(), name: z.string(), input: jsonObject, at: z.string() }),
  AgentToolResulted: z.object({
    messageId: z.string(),
    iteration: z.number().int(),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean(),
    skipped: z.string().nullable(),
    durationMs: z.number(),
    at: z.string(),
  }),
  AgentMessageCancelRequested: z.object({ messageId: z.string(), by: z.string().nullable(), at: z.string() }),
  AgentMessageCompleted: z.object({
    messageId: z.string(),
    text: z.string(),
    finishReason: z.enum(AGENT_FINISH_REASONS),
    iterations: z.number().int(),
    toolCalls: z.number().int(),
    usage: usageSchema,
    cost: z.number(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    at: z.string(),
  }),
  AgentSessionDeleted: z.object({ at: z.string() }),
};
export type AgentSessionEvent = EventsOf<typeof agentSessionEventSchemas>;
