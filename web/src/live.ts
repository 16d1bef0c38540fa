import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { token } from './session';

/**
 * Server-Sent Events over fetch: EventSource cannot send the bearer token, so the live streams of
 * runs and workflows (`GET /processes/{id}/stream`, `GET /workflows/{id}/stream`) are read this way.
 * Resumes after the last `id` seen when the connection drops, until `stop()` or the server ends the
 * stream (it does after a run's final event). A frame's `data` is the item the matching list
 * gives: `{type, revision, data, actorId, occurredAt}` for a run (as `/processes/{id}/events`),
 * `{eventId, type, data, occurredAt, actorId}` for a workflow (as `/workflows/{id}/history`).
 */
export interface LiveFrame {
  event: string;
  id?: string;
  data: unknown;
}

export function follow(path: string, onFrame: (frame: LiveFrame) => void, onEnd?: (error?: Error) => void): () => void {
  const controller = new AbortController();
  let lastId: string | undefined;
  let stopped = false;
  void (async () => {
    for (let attempt = 0; !stopped && attempt < 5; attempt++) {
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        const bearer = token();
        if (bearer) headers.authorization = `Bearer ${bearer}`;
        if (lastId) headers['last-event-id'] = lastId;
        const response = await fetch(`/api${path}`, { headers, signal: controller.signal });
        if (!response.ok || !response.body) throw new Error(`the live stream answered ${response.status}`);
        const parser = createParser({
          onEvent(message: EventSourceMessage) {
            if (message.id) lastId = message.id;
            let data: unknown = message.data;
            try {
              data = JSON.parse(message.data);
            } catch {
              /* a non-JSON frame (ping) keeps its text */
            }
            onFrame({ event: message.event ?? 'message', id: message.id, data });
          },
        });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
        stopped = true; // the server ended the stream: the run is final
        onEnd?.();
        return;
      } catch (err) {
        if (stopped || controller.signal.aborted) return;
        if (attempt === 4) onEnd?.(err as Error);
        await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
      }
    }
  })();
  return () => {
    stopped = true;
    controller.abort();
  };
}
