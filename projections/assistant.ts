import type { RecordedEvent } from '../domain/shared/events.js';
import { ASSISTANT_CATEGORY, type AssistantEvent, type ConversationMessage, type ConversationScope } from '../domain/assistant/index.js';
import type { AssistantReads } from '../ports/assistant.js';
import type { Doc, ReadStore } from '../ports/read-store.js';
import { flowViewOf, getFlow, listFlows } from './flows.js';
import { ownedCollections, type Projector } from './projector.js';
import { getProcess, processView, type ProcessDoc } from './runs.js';

/**
 * The conversations list (title, message count, last activity, whether a generation runs). The
 * history itself is read from the conversation's stream (GET folds it): it is the log, and a
 * conversation is bounded (ASSISTANT_LIMITS.messages).
 */
export interface ConversationDoc extends Doc {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
  title: string;
  messageCount: number;
  running: string | null;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
  version: number;
}

/** One message (the user's, or the assistant's reply with its tool steps and feedback). */
export interface MessageDoc extends Doc, Omit<ConversationMessage, 'id'> {
  conversationId: string;
  /** Order in the conversation: 2 × the revision of UserMessageSent (+1 for the reply). */
  seq: number;
  version: number;
}

const CONVERSATIONS = 'assistant_conversations';
const MESSAGES = 'assistant_messages';
const idOf = (streamId: string) => streamId.slice(streamId.indexOf('-') + 1);

export const assistantProjector: Projector = {
  name: 'assistant',
  categories: [ASSISTANT_CATEGORY],
  ...ownedCollections({ [CONVERSATIONS]: [{ keys: { userId: 1, orgId: 1, workspaceId: 1, updatedAt: -1 } }], [MESSAGES]: [{ keys: { conversationId: 1, seq: 1 } }] }),
  async project(recorded, store) {
    const event = recorded as RecordedEvent & AssistantEvent;
    const id = idOf(recorded.streamId);
    await projectMessage(store, id, event, recorded.revision);
    const conversations = store.collection<ConversationDoc>(CONVERSATIONS);
    const doc = await conversations.findOne({ _id: id });
    if (event.type === 'ConversationCreated') {
      if (doc) return;
      const d = event.data;
      await conversations.replaceOne(
        { _id: id },
        { _id: id, userId: d.userId, orgId: d.orgId, workspaceId: d.workspaceId, title: d.title, messageCount: 0, running: null, createdAt: d.at, updatedAt: d.at, deleted: false, version: recorded.revision },
        { upsert: true },
      );
      return;
    }
    if (!doc || doc.version >= recorded.revision) return;
    const next: ConversationDoc = { ...doc, version: recorded.revision };
    switch (event.type) {
      case 'ConversationRenamed':
        Object.assign(next, { title: event.data.title, updatedAt: event.data.at });
        break;
      case 'ConversationDeleted':
        Object.assign(next, { deleted: true, running: null, updatedAt: event.data.at });
        break;
      case 'UserMessageSent':
        Object.assign(next, { messageCount: doc.messageCount + 2, running: event.data.replyId, updatedAt: event.data.at });
        break;
      case 'GenerationCompleted':
      case 'GenerationCancelled':
        Object.assign(next, { running: doc.running === event.data.replyId ? null : doc.running, updatedAt: event.data.at });
        break;
      default:
        break;
    }
    await conversations.replaceOne({ _id: id, version: doc.version }, next);
  },
};

async function projectMessage(store: ReadStore, conversationId: string, event: AssistantEvent, revision: number) {
  const messages = store.collection<MessageDoc>(MESSAGES);
  if (event.type === 'UserMessageSent') {
    const d = event.data;
    const base = { conversationId, at: d.at, tools: [], finishReason: null, usage: null, cost: null, error: null, feedback: null, completedAt: null, version: revision };
    if (!(await messages.findOne({ _id: d.messageId }))) {
      await messages.replaceOne({ _id: d.messageId }, { ...base, _id: d.messageId, seq: revision * 2, role: 'user', content: d.content, status: null, replyTo: null, provider: null, model: null }, { upsert: true });
    }
    if (!(await messages.findOne({ _id: d.replyId }))) {
      await messages.replaceOne({ _id: d.replyId }, { ...base, _id: d.replyId, seq: revision * 2 + 1, role: 'assistant', content: '', status: 'running', replyTo: d.messageId, provider: d.provider, model: d.model }, { upsert: true });
    }
    return;
  }
  const messageId =
    event.type === 'MessageFeedbackGiven' ? event.data.messageId
    : event.type === 'AssistantToolCalled' || event.type === 'AssistantToolResulted' || event.type === 'GenerationCompleted' || event.type === 'GenerationCancelled' ? event.data.replyId
    : null;
  if (messageId === null) return;
  const doc = await messages.findOne({ _id: messageId });
  if (!doc || doc.version >= revision) return;
  const next: MessageDoc = { ...doc, version: revision };
  switch (event.type) {
    case 'AssistantToolCalled': {
      const d = event.data;
      next.tools = [...doc.tools, { toolCallId: d.toolCallId, name: d.name, input: d.input, iteration: d.iteration, result: null }];
      break;
    }
    case 'AssistantToolResulted': {
      const d = event.data;
      next.tools = doc.tools.map((t) => (t.toolCallId === d.toolCallId ? { ...t, result: { content: d.content, isError: d.isError } } : t));
      break;
    }
    case 'GenerationCompleted': {
      const d = event.data;
      Object.assign(next, { content: d.content, status: d.error ? 'failed' : 'completed', finishReason: d.finishReason, usage: d.usage, cost: d.cost, error: d.error, completedAt: d.at });
      break;
    }
    case 'GenerationCancelled': {
      const d = event.data;
      Object.assign(next, { content: d.content, status: 'cancelled', finishReason: 'cancelled', usage: d.usage, cost: d.cost, completedAt: d.at });
      break;
    }
    case 'MessageFeedbackGiven': {
      const d = event.data;
      next.feedback = d.rating === null ? null : { rating: d.rating, comment: d.comment, at: d.at };
      break;
    }
  }
  await messages.replaceOne({ _id: messageId, version: doc.version }, next);
}

export const assistantProjectors: Projector[] = [assistantProjector];

export function getConversation(store: ReadStore, scope: ConversationScope, conversationId: string) {
  return store.collection<ConversationDoc>(CONVERSATIONS).findOne({ _id: conversationId, userId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false });
}

/** A conversation's messages in order (the caller checked the conversation is the user's). */
export function conversationMessages(store: ReadStore, conversationId: string) {
  return store.collection<MessageDoc>(MESSAGES).find({ conversationId }, { sort: { seq: 1 }, limit: 10_000 });
}

export function listConversations(store: ReadStore, scope: ConversationScope, options: { limit: number; cursor: string | null }) {
  return store
    .collection<ConversationDoc>(CONVERSATIONS)
    .page({ userId: scope.userId, orgId: scope.orgId, workspaceId: scope.workspaceId, deleted: false }, { sort: { updatedAt: -1 }, limit: options.limit, cursor: options.cursor });
}

const tenantOf = (scope: ConversationScope) =>
  scope.orgId === null ? { orgId: null, workspaceId: scope.workspaceId, ownerId: scope.userId } : { orgId: scope.orgId, workspaceId: scope.workspaceId };

/** The assistant tools' reads (port ports/assistant.ts). */
export function assistantReads(store: ReadStore): AssistantReads {
  return {
    async listFlows(scope, limit) {
      const page = await listFlows(store, scope, { limit, cursor: null });
      return page.items.map((f) => ({
        id: f.id, name: f.name, description: f.description ?? null, archived: f.archived, nodeCount: f.nodeCount, edgeCount: f.edgeCount, version: f.version, updatedAt: f.updatedAt,
      }));
    },
    async getFlow(scope, flowId) {
      const record = await getFlow(store, flowId, scope);
      return record ? (flowViewOf(record) as unknown as Record<string, unknown>) : null;
    },
    async listRuns(scope, flowId, limit) {
      const filter = { ...tenantOf(scope), ...(flowId !== null && { flowId }) };
      const docs = await store.collection<ProcessDoc>('processes').find(filter, { sort: { requestedAt: -1 }, limit, projection: { state: 0 } });
      return docs.map((d) => ({ processId: d._id, flowId: d.flowId, mode: d.mode, status: d.status, requestedAt: d.requestedAt, finishedAt: d.finishedAt }));
    },
    async getRun(scope, processId) {
      const doc = await getProcess(store, processId, scope);
      return doc ? (processView(doc) as unknown as Record<string, unknown>) : null;
    },
  };
}
