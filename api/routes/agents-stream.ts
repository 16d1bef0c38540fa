import { agentSessionStreamId, type AgentMessageState, type AgentSessionEvent, type AgentSessionState } from '../../domain/agents/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventStore } from '../../ports/event-store.js';

/**
 * What a client of an agent turn sees (issue 14): each session event as Server-Sent Events, with
 * its stream revision as the id, live (commands/agents-messages.ts hands the turn's session events
 * to listeners) or replayed from the log for a client that resumes with Last-Event-ID. The wire
 * shape is the API's, so it lives with the route, not with the commands.
 */
export interface TurnSseEvent {
  event: 'message.started' | 'message.delta' | 'tool.called' | 'tool.result' | 'message.completed' | 'error';
  id: string | null;
  data: Record<string, unknown>;
}

/** The SSE events of one session event (revision = its id). */
export function turnSseEvents(event: { type: string; data: unknown }, revision: number, sessionId: string): TurnSseEvent[] {
  const id = String(revision);
  const e = event as AgentSessionEvent;
  switch (e.type) {
    case 'AgentMessageReceived':
      return [{ event: 'message.started', id, data: { sessionId, messageId: e.data.messageId, content: e.data.content, context: e.data.context, at: e.data.at } }];
    case 'AgentTextDelta':
      return [{ event: 'message.delta', id, data: { messageId: e.data.messageId, iteration: e.data.iteration, text: e.data.text } }];
    case 'AgentToolCalled':
      return [{ event: 'tool.called', id, data: { messageId: e.data.messageId, iteration: e.data.iteration, toolCallId: e.data.toolCallId, name: e.data.name, input: e.data.input } }];
    case 'AgentToolResulted': {
      const { messageId, iteration, toolCallId, name, content, isError, skipped, durationMs } = e.data;
      return [{ event: 'tool.result', id, data: { messageId, iteration, toolCallId, name, content, isError, skipped, durationMs } }];
    }
    case 'AgentMessageCompleted': {
      const { messageId, text, finishReason, iterations, toolCalls, usage, cost, error } = e.data;
      const completed: TurnSseEvent = { event: 'message.completed', id, data: { sessionId, messageId, text, finishReason, iterations, toolCalls, usage, cost, error } };
      return error ? [{ event: 'error', id: null, data: { messageId, ...error } }, completed] : [completed];
    }
    default:
      return [];
  }
}

/**
 * A page of the session's SSE events after revision `after` (exclusive), for resuming: stops at
 * the end of the turn `messageId` (done once its AgentMessageCompleted is read).
 */
export async function sessionEventsAfter(store: EventStore, sessionId: string, messageId: string, after: number) {
  const events = (await store.readStream(agentSessionStreamId(sessionId), { fromRevision: after + 1, maxCount: 200 })) as RecordedEvent[];
  const out: TurnSseEvent[] = [];
  let next = after;
  let done = false;
  for (const e of events) {
    next = e.revision;
    const data = e.data as { messageId?: string };
    if (data.messageId !== messageId) {
      if (e.type === 'AgentSessionDeleted') {
        done = true;
        break;
      }
      continue;
    }
    out.push(...turnSseEvents(e, e.revision, sessionId));
    if (e.type === 'AgentMessageCompleted') {
      done = true;
      break;
    }
  }
  return { events: out, next, done };
}

/** The message a resumed stream continues: the one whose events include revision `revision`. */
export function messageAtRevision(state: AgentSessionState, revision: number): AgentMessageState | undefined {
  let found: AgentMessageState | undefined;
  for (const m of state.messages) if (m.fromRevision <= revision) found = m;
  return found;
}
