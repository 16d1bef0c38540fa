import { z } from 'zod';
import {
  cancelGeneration,
  createConversation,
  deleteConversation,
  giveFeedback,
  renameConversation,
  sendMessage,
  type AssistantPorts,
} from '../../commands/assistant.js';
import {
  ASSISTANT_LIMITS,
  conversationNotFound,
  conversationStreamId,
  conversationTitleSchema,
  messageContentSchema,
  ratingSchema,
  type ConversationMessage,
  type ConversationScope,
  type ConversationState,
} from '../../domain/assistant/index.js';
import { flowStreamId } from '../../domain/flows/index.js';
import type { Services } from '../../ports/services.js';
import { conversationMessages, getConversation, listConversations, type ConversationDoc, type MessageDoc } from '../../projections/assistant.js';
import { followLog, lastEventIdOf, openSse, sseReply } from '../sse.js';
import { replyFramesAfter, replyOfRevision } from './assistant-stream.js';
import { defineRoute, type RouteInput } from '../route.js';
import { pageQuery } from './pagination.js';

/**
 * The in-product assistant (issue 14): conversations of the calling user in the active workspace,
 * answered by an agent the service provides (commands/assistant.ts). Another user's conversation
 * answers 404. See docs/assistant.md.
 */

type AnyInput = RouteInput<any, any, any>;

const tag = 'Assistant';
const auth = 'bearer' as const;
const idSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
const conversationParams = z.strictObject({ conversationId: idSchema });
const messageParams = z.strictObject({ conversationId: idSchema, messageId: idSchema });

const usageOut = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int() });
const messageSchema = z.object({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  /** Assistant messages: running, completed, cancelled (partial content kept) or failed; null for the user's. */
  status: z.enum(['running', 'completed', 'cancelled', 'failed']).nullable(),
  replyTo: z.string().nullable(),
  tools: z.array(z.object({ toolCallId: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), iteration: z.number().int(), result: z.object({ content: z.string(), isError: z.boolean() }).nullable() })),
  finishReason: z.string().nullable(),
  usage: usageOut.nullable(),
  cost: z.number().nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  feedback: z.object({ rating: ratingSchema, comment: z.string().nullable(), at: z.string() }).nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  at: z.string(),
  completedAt: z.string().nullable(),
});
const conversationSchema = z.object({
  id: z.string(),
  title: z.string(),
  messageCount: z.number().int(),
  /** The assistant message being generated, or null. */
  runningMessageId: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const ok = <T extends z.ZodRawShape>(shape: T) => z.object({ success: z.literal(true), ...shape });

const errors = {
  401: { description: 'UNAUTHENTICATED' },
  404: { description: "CONVERSATION_NOT_FOUND (missing, deleted or another user's)" },
};

const scopeOf = (input: AnyInput): ConversationScope => ({ userId: input.principal!.userId, orgId: input.principal!.orgId, workspaceId: input.principal!.workspaceId });

function assistantPorts(services: Services): AssistantPorts {
  return {
    eventStore: services.eventStore, llm: services.llm, reads: services.assistantReads, skills: services.skills, sealer: services.sealedBox,
    streamSignals: services.streamSignals, logger: services.logger, now: services.now, settings: services.config, replies: services.assistantReplies,
  };
}

const conversationOfDoc = (d: ConversationDoc) => ({ id: d._id, title: d.title, messageCount: d.messageCount, runningMessageId: d.running, createdAt: d.createdAt, updatedAt: d.updatedAt });
const conversationOfState = (s: ConversationState) => ({ id: s.conversationId, title: s.title, messageCount: s.messages.length, runningMessageId: s.running, createdAt: s.createdAt, updatedAt: s.updatedAt });

function messageView(m: ConversationMessage | MessageDoc): z.infer<typeof messageSchema> {
  const id = '_id' in m ? (m as MessageDoc)._id : (m as ConversationMessage).id;
  return {
    id, role: m.role, content: m.content, status: m.status, replyTo: m.replyTo, tools: m.tools, finishReason: m.finishReason, usage: m.usage, cost: m.cost,
    error: m.error, feedback: m.feedback, provider: m.provider, model: m.model, at: m.at, completedAt: m.completedAt,
  };
}

function messageOf(state: ConversationState, id: string | null) {
  const m = id ? state.messages.find((x) => x.id === id) : undefined;
  return m ? messageView(m) : null;
}

async function visibleConversation(input: AnyInput, conversationId: string): Promise<ConversationDoc> {
  const doc = await getConversation(input.services.readStore, scopeOf(input), conversationId);
  if (!doc) throw conversationNotFound();
  return doc;
}

const sendBody = z.strictObject({
  content: messageContentSchema,
  stream: z.boolean().default(false).describe('true: answer text/event-stream (message.started, message.delta, tool.called, tool.result, message.completed, error; ping every 15 s)'),
});


/** Streams `replyId` from the log after revision `after` until it ended; `beforeEnd` runs before the closing frames (read-your-writes of what the reply changed). */
function streamReply(input: AnyInput, replyId: string, after: number, beforeEnd: () => Promise<void>) {
  const { services, params } = input;
  // Before the answer starts: a process at its bound of waiters answers 503 instead of a broken stream.
  const watch = services.streamSignals.watch(conversationStreamId(params.conversationId));
  const sse = openSse(input.koa, { headers: { 'X-Message-Id': replyId } });
  void followLog(sse, {
    after,
    read: (from) =>
      replyFramesAfter(services.eventStore, params.conversationId, replyId, from, async (state) => {
        await beforeEnd();
        const reply = messageOf(state, replyId);
        return [...(reply?.error ? [{ event: 'error', data: reply.error }] : []), { event: 'message.completed', data: { message: reply } }];
      }),
    watch,
    pollMs: 1_000,
  });
  return sseReply();
}

export const assistantRoutes = [
  defineRoute({
    method: 'GET',
    path: '/assistant/conversations',
    operationId: 'listAssistantConversations',
    summary: "list the caller's assistant conversations in the active workspace, most recently active first",
    tag, auth,
    query: pageQuery,
    responses: { 200: { description: 'a page', schema: ok({ items: z.array(conversationSchema), nextCursor: z.string().nullable() }) }, 401: errors[401] },
    async handler(input) {
      const page = await listConversations(input.services.readStore, scopeOf(input), { limit: input.query.limit, cursor: input.query.cursor ?? null });
      return { status: 200, body: { success: true, items: page.items.map(conversationOfDoc), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/assistant/conversations',
    operationId: 'createAssistantConversation',
    summary: 'start a conversation with the assistant (title optional)',
    tag, auth,
    body: z.strictObject({ title: conversationTitleSchema.optional() }),
    responses: { 201: { description: 'created', schema: ok({ conversation: conversationSchema }) }, 401: errors[401] },
    async handler(input) {
      const conversationId = input.services.newId();
      const written = await createConversation(input.services.eventStore, input.command, scopeOf(input), conversationId, input.body.title ?? 'New conversation');
      await input.settle(written.position, conversationStreamId(conversationId));
      return { status: 201, body: { success: true, conversation: conversationOfState(written.state) } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/assistant/conversations/{conversationId}',
    operationId: 'getAssistantConversation',
    summary: 'a conversation with its whole history: messages in order, the tools each reply called with their results, feedback',
    tag, auth,
    params: conversationParams,
    responses: { 200: { description: 'the conversation', schema: ok({ conversation: conversationSchema, messages: z.array(messageSchema) }) }, ...errors },
    async handler(input) {
      const doc = await visibleConversation(input, input.params.conversationId);
      const messages = await conversationMessages(input.services.readStore, doc._id);
      return { status: 200, body: { success: true, conversation: conversationOfDoc(doc), messages: messages.map(messageView) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/assistant/conversations/{conversationId}',
    operationId: 'deleteAssistantConversation',
    summary: 'delete a conversation (a reply still running is left to end; nothing it records afterwards is kept)',
    tag, auth,
    params: conversationParams,
    responses: { 200: { description: 'deleted', schema: ok({ deleted: z.literal(true), id: z.string() }) }, ...errors },
    async handler(input) {
      const written = await deleteConversation({ eventStore: input.services.eventStore, replies: input.services.assistantReplies }, input.command, scopeOf(input), input.params.conversationId);
      await input.settle(written.position, conversationStreamId(input.params.conversationId));
      return { status: 200, body: { success: true, deleted: true, id: input.params.conversationId } };
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/assistant/conversations/{conversationId}',
    operationId: 'renameAssistantConversation',
    summary: 'rename a conversation',
    tag, auth,
    params: conversationParams,
    body: z.strictObject({ title: conversationTitleSchema }),
    responses: { 200: { description: 'renamed', schema: ok({ conversation: conversationSchema }) }, ...errors },
    async handler(input) {
      const written = await renameConversation(input.services.eventStore, input.command, scopeOf(input), input.params.conversationId, input.body.title);
      await input.settle(written.position, conversationStreamId(input.params.conversationId));
      return { status: 200, body: { success: true, conversation: conversationOfState(written.state) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/assistant/conversations/{conversationId}/messages',
    operationId: 'sendAssistantMessage',
    summary:
      'send a message; the assistant answers with its tools (read flows, runs and node types, explain a failed run, create or change flows) and the active skills. JSON when done, or with stream: true Server-Sent Events (each frame with `id:`, the conversation stream revision). With a `Last-Event-ID` header it sends nothing new: it resumes the stream of the reply that event belongs to, from the log',
    tag, auth,
    params: conversationParams,
    body: sendBody,
    responses: {
      200: {
        description: `JSON {message, reply} when done; with stream: true, text/event-stream: message.started, message.delta, tool.called, tool.result, message.completed ({message}: the reply, status completed | cancelled | failed), error; ping every 15 s. Content ≤ ${ASSISTANT_LIMITS.messageChars} characters.`,
        schema: ok({ message: messageSchema, reply: messageSchema }),
      },
      ...errors,
      409: { description: 'CONVERSATION_BUSY (details.runningMessageId: cancel it with POST …/cancel) or TOO_MANY_MESSAGES' },
    },
    async handler(input) {
      const { services, params, body } = input;
      const streamId = conversationStreamId(params.conversationId);
      // Resuming a dropped stream: nothing is sent; the reply the id belongs to is replayed from the log.
      const lastEventId = lastEventIdOf(input.koa, /^\d{1,10}$/);
      if (lastEventId !== null) {
        await visibleConversation(input, params.conversationId);
        const after = Number(lastEventId);
        const replyId = await replyOfRevision(services.eventStore, params.conversationId, after);
        return streamReply(input, replyId, after, async () => undefined);
      }
      const messageId = services.newId();
      const replyId = services.newId();
      // Flows the tools changed: the answer waits for their read model too, as the editor's own writes do.
      const flowsChanged = new Map<string, number>();
      const settleFlows = async () => {
        for (const [flowId, position] of flowsChanged) await input.settle(position, flowStreamId(flowId));
      };
      const sent = await sendMessage(assistantPorts(services), input.command, scopeOf(input), params.conversationId, {
        messageId, replyId, content: body.content, stream: body.stream,
        onFlowChanged: (flowId, position) => { if (position !== null) flowsChanged.set(flowId, position); },
      });
      if (!body.stream) {
        const done = await sent.done;
        await settleFlows();
        await input.settle(done.position, streamId);
        return { status: 200, body: { success: true, message: messageOf(done.state, messageId), reply: messageOf(done.state, replyId) } };
      }
      await input.settle(sent.sent.position, streamId);
      // From the user's message on, the frames are the log's (ids: revisions), as a resumed stream's.
      return streamReply(input, replyId, sent.sent.revision - 1, async () => {
        await sent.done;
        await settleFlows();
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/assistant/conversations/{conversationId}/cancel',
    operationId: 'cancelAssistantGeneration',
    summary:
      'cancel the reply in progress: the model call and every tool in flight stop within a second, GenerationCancelled is recorded and the partial answer kept (cancelled: false when nothing was running)',
    tag, auth,
    params: conversationParams,
    responses: { 200: { description: 'the reply as kept', schema: ok({ cancelled: z.boolean(), message: messageSchema.nullable() }) }, ...errors },
    async handler(input) {
      const result = await cancelGeneration(assistantPorts(input.services), input.command, scopeOf(input), input.params.conversationId);
      await input.settle(result.position, conversationStreamId(input.params.conversationId));
      return { status: 200, body: { success: true, cancelled: result.cancelled, message: messageOf(result.state, result.replyId) } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/assistant/conversations/{conversationId}/messages/{messageId}/feedback',
    operationId: 'sendAssistantFeedback',
    summary: "like or dislike one of the assistant's messages, with an optional comment; rating null withdraws the feedback",
    tag, auth,
    params: messageParams,
    body: z.strictObject({ rating: ratingSchema.nullable(), comment: z.string().trim().max(ASSISTANT_LIMITS.commentChars).optional() }),
    responses: {
      200: { description: 'the message with its feedback', schema: ok({ message: messageSchema }) },
      400: { description: "VALIDATION_FAILED, FEEDBACK_ON_USER_MESSAGE (feedback is for the assistant's messages)" },
      ...errors,
      404: { description: 'CONVERSATION_NOT_FOUND or MESSAGE_NOT_FOUND' },
    },
    async handler(input) {
      const { params, body } = input;
      const written = await giveFeedback(input.services.eventStore, input.command, scopeOf(input), params.conversationId, params.messageId, body.rating, body.comment ?? null);
      await input.settle(written.position, conversationStreamId(params.conversationId));
      return { status: 200, body: { success: true, message: messageOf(written.state, params.messageId) } };
    },
  }),
];
