import { z } from 'zod';
import { AGENT_FINISH_REASONS, AGENT_LIMITS, agentToolRefSchema } from '../../domain/agents/index.js';
import { LLM_PROVIDER_IDS } from '../../ports/llm.js';

/** Schemas of the agents routes (agents.ts): parameters, bodies, answers; the OpenAPI document shows them. */

export const idSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
export const agentParams = z.strictObject({ agentId: idSchema });
export const sessionParams = agentParams.extend({ sessionId: idSchema });
export const messageParams = sessionParams.extend({ messageId: idSchema });

export const agentBody = z.strictObject({
  name: z.string().trim().min(1).max(AGENT_LIMITS.name),
  description: z.string().max(AGENT_LIMITS.description).default(''),
  provider: z.enum(LLM_PROVIDER_IDS),
  model: z.string().trim().min(1).max(200),
  instructions: z.string().max(AGENT_LIMITS.instructions).default(''),
  tools: z.array(agentToolRefSchema).max(AGENT_LIMITS.tools).default([]),
  skills: z.array(idSchema).max(AGENT_LIMITS.skills).default([]),
  memory: z.strictObject({ enabled: z.boolean(), scope: z.enum(['agent', 'user', 'session']).default('agent') }).nullable().default(null),
  limits: z
    .strictObject({
      maxIterations: z.number().int().min(1).max(50).optional(),
      maxToolCalls: z.number().int().min(0).max(200).optional(),
      maxTokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
      timeoutMs: z.number().int().min(1_000).max(3_600_000).optional(),
    })
    .default({}),
  temperature: z.number().min(0).max(2).nullable().default(null),
});

export const messageBody = z.strictObject({
  content: z.string().min(1).max(AGENT_LIMITS.messageChars),
  stream: z.boolean().default(false),
  attachments: z
    .array(z.strictObject({ name: z.string().min(1).max(200), mediaType: z.string().max(200).default('text/plain'), content: z.string().max(AGENT_LIMITS.attachmentChars) }))
    .max(AGENT_LIMITS.attachments)
    .default([]),
});

export const usageSchema = z.object({ promptTokens: z.number(), completionTokens: z.number(), cachedTokens: z.number(), cacheWriteTokens: z.number(), totalTokens: z.number() });
export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  provider: z.string(),
  model: z.string(),
  instructions: z.string(),
  tools: z.array(z.record(z.string(), z.unknown())),
  skills: z.array(z.string()),
  memory: z.object({ enabled: z.boolean(), scope: z.string() }).nullable(),
  limits: z.object({ maxIterations: z.number(), maxToolCalls: z.number(), maxTokens: z.number().nullable(), timeoutMs: z.number() }),
  temperature: z.number().nullable(),
  ownerId: z.string(),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const toolCallSchema = z.object({
  id: z.string(),
  iteration: z.number(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  result: z.object({ content: z.string(), isError: z.boolean(), skipped: z.string().nullable(), durationMs: z.number() }).nullable(),
});
export const messageSchema = z.object({
  id: z.string(),
  content: z.string(),
  attachments: z.array(z.object({ name: z.string(), mediaType: z.string(), content: z.string() })),
  createdAt: z.string(),
  status: z.enum(['running', 'completed']),
  answer: z.object({
    text: z.string(),
    finishReason: z.enum(AGENT_FINISH_REASONS).nullable(),
    iterations: z.number(),
    toolCalls: z.number(),
    usage: usageSchema,
    cost: z.number(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    completedAt: z.string().nullable(),
  }),
  toolCalls: z.array(toolCallSchema),
  context: z.object({ budgetTokens: z.number(), estimatedTokens: z.number(), includedMessageIds: z.array(z.string()), droppedMessageIds: z.array(z.string()) }),
});
export const sessionSummarySchema = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string().nullable(),
  messageCount: z.number(),
  running: z.string().nullable(),
  lastFinishReason: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const sessionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  title: z.string().nullable(),
  running: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  usage: usageSchema,
  cost: z.number(),
  messages: z.array(messageSchema),
});
export const ok = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });
