import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ConsoleError, token } from '../session';

/**
 * An agent's answer as it streams: `POST …/sessions/{sessionId}/messages` with `stream: true`
 * answers Server-Sent Events (api/routes/agents-stream.ts: message.started, message.delta,
 * tool.called, tool.result, message.completed, error). `web/src/live.ts` follows GET streams; this
 * one posts the message and reads the answer on the same request. An error answer (409 busy, 402
 * budget, …) is JSON and is thrown with the API's code.
 */
export interface TurnEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

export async function streamTurn(agentId: string, sessionId: string, content: string, onEvent: (e: TurnEvent) => void, signal?: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
  const bearer = token();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const response = await fetch(`/api/agents/${encodeURIComponent(agentId)}/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ content, stream: true }),
    signal,
  });
  if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream') || !response.body) {
    const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    throw new ConsoleError({ code: body?.error?.code ?? `HTTP_${response.status}`, message: body?.error?.message ?? `the agent answered ${response.status}` }, response.status);
  }
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      let data: Record<string, unknown> = {};
      try {
        data = JSON.parse(message.data) as Record<string, unknown>;
      } catch {
        return; // a ping
      }
      onEvent({ event: message.event ?? 'message', id: message.id, data });
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}
