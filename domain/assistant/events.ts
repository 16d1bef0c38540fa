import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/** Limits of the assistant context (README "Limits", docs/assistant.md). */
export const ASSISTANT_LIMITS = {
  titleChars: 200,
  messageChars: 20_000,
  commentChars: 2_000,
  /** Messages (user and assistant) per conversation; then start a new one. */
  messages: 1_000,
  /** Tool inputs and results kept in the log are cut to this many characters. */
  toolTextChars: 20_000,
} as const;

export const conversationTitleSchema = z.string().trim().min(1).max(ASSISTANT_LIMITS.titleChars);
export const messageContentSchema = z.string().trim().min(1).max(ASSISTANT_LIMITS.messageChars);
export const ratingSchema = z.enum(['like', 'dislike']);
export const generationStatusSchema = z.enum(['running', 'completed', 'cancelled', 'failed']);
const usageSchema = z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0), totalTokens: z.number().int().min(0) });

export const assistantEventSchemas = {
  ConversationCreated: z.object({ conversationId: z.string(), userId: z.string(), orgId: z.string().nullable(), workspaceId: z.string().nullable(), title: conversationTitleSchema, at: z.string() }),
  ConversationRenamed: z.object({ title: conversationTitleSchema, at: z.string() }),
  ConversationDeleted: z.object({ at: z.string() }),
  /** The user's message; `replyId` is the assistant message the generation that starts now will fill. */
  UserMessageSent: z.object({ messageId: z.string(), replyId: z.string(), content: z.string(), provider: z.string(), model: z.string(), at: z.string() }),
  AssistantToolCalled: z.object({ replyId: z.string(), toolCallId: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), iteration: z.number().int(), at: z.string() }),
  AssistantToolResulted: z.object({ replyId: z.string(), toolCallId: z.string(), name: z.string(), content: z.string(), isError: z.boolean(), iteration: z.number().int(), at: z.string() }),
  /** Streamed text of the running reply, several deltas coalesced per append (only for a streamed reply): what a resumed stream replays. */
  AssistantTextDelta: z.object({ replyId: z.string(), iteration: z.number().int(), text: z.string(), at: z.string() }),
  GenerationCompleted: z.object({
    replyId: z.string(),
    content: z.string(),
    finishReason: z.string(),
    iterations: z.number().int(),
    toolCalls: z.number().int(),
    usage: usageSchema,
    cost: z.number().min(0),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    at: z.string(),
  }),
  /** A cancel asked from a process that does not run the generation: the one that does stops it. */
  GenerationCancelRequested: z.object({ replyId: z.string(), at: z.string() }),
  /** The generation stopped on a cancel; `content` is the partial answer, kept in the conversation. */
  GenerationCancelled: z.object({ replyId: z.string(), content: z.string(), usage: usageSchema, cost: z.number().min(0), at: z.string() }),
  /** `rating: null` withdraws the feedback. */
  MessageFeedbackGiven: z.object({ messageId: z.string(), rating: ratingSchema.nullable(), comment: z.string().max(ASSISTANT_LIMITS.commentChars).nullable(), at: z.string() }),
};

export type AssistantEvent = EventsOf<typeof assistantEventSchemas>;
export type LlmUsageSummary = z.infer<typeof usageSchema>;

export const ASSISTANT_CATEGORY = 'assistantconv';
export const conversationStreamId = (conversationId: string) => `${ASSISTANT_CATEGORY}-${conversationId}`;

/** The actor id the assistant's own writes carry (flows it creates or changes), on behalf of `userId`. */
export const assistantActorId = (userId: string) => `assistant:${userId}`;
