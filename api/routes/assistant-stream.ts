import { loadConversation } from '../../commands/assistant.js';
import { conversationStreamId, type ConversationState } from '../../domain/assistant/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { ValidationError } from '../errors.js';
import type { EventStore } from '../../ports/event-store.js';
import type { SseEvent } from '../sse.js';

/**
 * A streamed reply as Server-Sent Events, read from the conversation's log: the live answer and a
 * resumed one (Last-Event-ID) are the same frames with the same ids (the stream revisions), so a
 * client that drops misses nothing and sees nothing twice. `message.started` is the user's message
 * (UserMessageSent), then `message.delta` (AssistantTextDelta), `tool.called`, `tool.result`, and at
 * the reply's end `error` (a failed reply) and `message.completed` with the reply.
 */
const PAGE = 500;

export interface ReplyFrames {
  events: SseEvent[];
  next: number;
  done: boolean;
}

/** The frames of `replyId` after revision `after`; `ended` builds the closing frames from the conversation once the reply ended. */
export async function replyFramesAfter(store: EventStore, conversationId: string, replyId: string, after: number, ended: (state: ConversationState) => Promise<SseEvent[]>): Promise<ReplyFrames> {
  const events = await store.readStream(conversationStreamId(conversationId), { fromRevision: after + 1, maxCount: PAGE });
  const out: SseEvent[] = [];
  let next = after;
  for (const e of events) {
    next = e.revision;
    if (e.type === 'ConversationDeleted') return { events: out, next, done: true };
    const frame = frameOf(conversationId, replyId, e);
    if (frame) out.push(frame);
    if ((e.type === 'GenerationCompleted' || e.type === 'GenerationCancelled') && (e.data as { replyId: string }).replyId === replyId) {
      const { state } = await loadConversation(store, conversationId);
      out.push(...(await ended(state)).map((f) => ({ ...f, id: e.revision })));
      return { events: out, next, done: true };
    }
  }
  return { events: out, next, done: false };
}

function frameOf(conversationId: string, replyId: string, e: RecordedEvent): SseEvent | null {
  const d = e.data as Record<string, unknown>;
  if (d.replyId !== replyId) return null;
  const id = e.revision;
  switch (e.type) {
    case 'UserMessageSent':
      return { id, event: 'message.started', data: { conversationId, messageId: d.messageId, replyId } };
    case 'AssistantTextDelta':
      return { id, event: 'message.delta', data: { messageId: replyId, text: d.text } };
    case 'AssistantToolCalled':
      return { id, event: 'tool.called', data: { messageId: replyId, toolCallId: d.toolCallId, name: d.name, input: d.input, iteration: d.iteration } };
    case 'AssistantToolResulted':
      return { id, event: 'tool.result', data: { messageId: replyId, toolCallId: d.toolCallId, name: d.name, content: d.content, isError: d.isError, iteration: d.iteration } };
    default:
      return null;
  }
}

/** The reply a `Last-Event-ID` (a revision of the conversation's stream) belongs to; 400 naming the header when none does. */
export async function replyOfRevision(store: EventStore, conversationId: string, revision: number): Promise<string> {
  const [event] = await store.readStream(conversationStreamId(conversationId), { fromRevision: revision, maxCount: 1 });
  const replyId = event?.revision === revision ? (event.data as { replyId?: unknown }).replyId : undefined;
  if (typeof replyId !== 'string') throw new ValidationError([{ field: 'headers.last-event-id', message: "is not the id of an event of this conversation's replies" }]);
  return replyId;
}
