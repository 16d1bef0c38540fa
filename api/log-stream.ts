import type { RecordedEvent } from '../domain/shared/events.js';
import { followLog, lastEventIdOf, openSse, sseReply, type SseEvent } from './sse.js';
import type { RouteInput } from './route.js';

/**
 * One aggregate's stream served live as Server-Sent Events (issue 34: runs and workflows as they
 * happen). Every event of the stream is one frame, its id the stream revision and its name the
 * event type in dotted form (`RunRequested` → `run.requested`, `NodeCompleted` → `node.completed`,
 * `WorkflowNodeStarted` → `workflow.node_started`); the data is the event as the stream's
 * `/events` route lists it. A reconnecting client sends the last id back (`Last-Event-ID`) and
 * gets the events after it, read from the log: nothing lost, nothing repeated. The response ends
 * after the aggregate's final event.
 */
const PAGE = 500;

export const frameNameOf = (type: string): string => {
  const words = type.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
  return `${words[0]}.${words.slice(1).join('_')}`;
};

export interface LogStreamOptions {
  streamId: string;
  /** The frame's data for one event (secrets masked by the caller). */
  dataOf(event: RecordedEvent): unknown;
  /** Event types after which the stream is complete. */
  final: ReadonlySet<string>;
}

export function serveLogStream(input: RouteInput<unknown, unknown, unknown>, options: LogStreamOptions) {
  const { services, koa } = input;
  const resumed = lastEventIdOf(koa, /^\d{1,9}$/);
  const after = resumed === null ? -1 : Number(resumed);
  const watch = services.streamSignals.watch(options.streamId);
  const sse = openSse(koa);
  void followLog(sse, {
    after,
    async read(from) {
      const events = await services.eventStore.readStream(options.streamId, { fromRevision: from + 1, maxCount: PAGE });
      if (events.length === 0 && from >= 0) {
        // Resumed after the final event itself: complete, nothing more will come.
        const [last] = await services.eventStore.readStream(options.streamId, { fromRevision: from, maxCount: 1 });
        if (last && options.final.has(last.type)) return { events: [], next: from, done: true };
      }
      const frames: SseEvent[] = [];
      let next = from;
      for (const event of events) {
        next = event.revision;
        frames.push({ id: event.revision, event: frameNameOf(event.type), data: options.dataOf(event) });
        if (options.final.has(event.type)) return { events: frames, next, done: true };
      }
      return { events: frames, next, done: false };
    },
    watch,
    pollMs: 1_000,
  });
  return sseReply();
}
