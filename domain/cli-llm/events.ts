import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

const isoTime = z.string().datetime({ offset: true });

/** The providers a requested model name can be routed to (the LLM port's ids). */
export const CLI_LLM_PROVIDERS = ['openai', 'anthropic', 'google', 'openai_compatible', 'offline'] as const;
export const cliLlmProviderSchema = z.enum(CLI_LLM_PROVIDERS);
export type CliLlmProvider = z.infer<typeof cliLlmProviderSchema>;

/** `model` null: the requested name is passed on unchanged. */
export const modelRouteSchema = z.strictObject({ provider: cliLlmProviderSchema, model: z.string().trim().min(1).max(200).nullable().default(null) });
export type ModelRoute = z.infer<typeof modelRouteSchema>;
/** Keys are model names as clients ask for them; a key ending in `*` matches every name with that prefix. */
export const modelMapSchema = z
  .record(z.string().trim().min(1).max(200), modelRouteSchema)
  .refine((map) => Object.keys(map).length <= 100, { message: 'at most 100 entries' });
export type ModelMap = z.infer<typeof modelMapSchema>;

/** Excerpts kept when an organization logs prompts: capped so events stay small. */
export const PROMPT_EXCERPT_CHARS = 2000;

/**
 * `clillmorg-<orgId>`: the organization's settings of the CLI's LLM proxy. `clillm-<userId>.<YYYY-MM-DD>`:
 * one user's proxied calls of one UTC day (usage, cost, outcome; the prompt only when the
 * organization logs prompts): their audit trail and usage record.
 */
export const cliLlmSettingsEventSchemas = {
  CliLlmOrgSettingsSet: z.object({ orgId: z.string().min(1), modelMap: modelMapSchema, logPrompts: z.boolean(), setBy: z.string().min(1), at: isoTime }),
};

export const cliLlmCallEventSchemas = {
  CliLlmCallRecorded: z.object({
    callId: z.string().min(1),
    userId: z.string().min(1),
    orgId: z.string().min(1).nullable(),
    /** Which credential made the call: its kind and id (never its secret). */
    credential: z.enum(['jwt', 'api_key', 'cli_token']),
    credentialId: z.string().nullable(),
    requestedModel: z.string(),
    provider: cliLlmProviderSchema,
    model: z.string(),
    /** Where the route came from. */
    routedBy: z.enum(['organization', 'service', 'explicit', 'default']),
    stream: z.boolean(),
    messages: z.number().int().nonnegative(),
    tools: z.number().int().nonnegative(),
    toolCalls: z.number().int().nonnegative(),
    outcome: z.enum(['completed', 'failed', 'aborted']),
    stopReason: z.string().nullable(),
    errorCode: z.string().nullable(),
    usage: z.object({
      inputTokens: z.number().int().nonnegative(),
      outputTokens: z.number().int().nonnegative(),
      cacheReadInputTokens: z.number().int().nonnegative(),
      cacheCreationInputTokens: z.number().int().nonnegative(),
    }),
    costUsd: z.number().nonnegative(),
    priced: z.boolean(),
    durationMs: z.number().int().nonnegative(),
    /** Only when the organization turned prompt logging on: the last user turn and the answer, cut to PROMPT_EXCERPT_CHARS. */
    content: z.object({ prompt: z.string().max(PROMPT_EXCERPT_CHARS), answer: z.string().max(PROMPT_EXCERPT_CHARS) }).nullable(),
    at: isoTime,
  }),
};

export type CliLlmSettingsEvent = EventsOf<typeof cliLlmSettingsEventSchemas>;
export type CliLlmCallEvent = EventsOf<typeof cliLlmCallEventSchemas>;
export type CliLlmCallRecord = z.infer<(typeof cliLlmCallEventSchemas)['CliLlmCallRecorded']>;
