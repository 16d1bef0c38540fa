import type { Context } from 'koa';
import { sleep } from '../lib/sleep.js';
import { ValidationError } from './errors.js';

/**
 * Server-Sent Events from a route handler. `openSse(koa)` takes the response over (Koa's body
 * pipeline is switched off, `koa.respond = false`), writes the headers and answers with a writer:
 * - `send({event, id, data})` writes one named event (`id:` when given; `data` as JSON), waiting
 *   while the socket is full; writes after the client left are dropped;
 * - a `ping` event (no id, `{at}`) every `pingMs` (default 15 s) while the stream is open;
 * - `signal` aborts when the client disconnects (or `close()` is called): pass it to the work
 *   that feeds the stream so that it stops with the client;
 * - `close()` ends the response.
 * The route handler then returns `sseReply()` (Koa ignores it: the response is already streaming).
 *
 * Resuming: `lastEventIdOf(koa)` reads `Last-Event-ID` (or `?lastEventId=`); `followLog` replays
 * the events kept in the log after that id, then follows new ones until `done`, waking on a
 * watch (e.g. `StreamSignals.watch(streamId)`) instead of polling tightly.
 */

export interface SseEvent {
  event: string;
  /** The event's id; the client sends the last one it saw back as `Last-Event-ID`. */
  id?: string | number | null;
  data: unknown;
}

export interface SseWriter {
  /** Aborted when the client disconnects or the stream is closed. */
  readonly signal: AbortSignal;
  readonly closed: boolean;
  /** Resolves once the frame is handed to the socket (after a drain when it was full). */
  send(event: SseEvent): Promise<void>;
  close(): void;
}

export interface SseOptions {
  /** Interval of `ping` events (default 15,000 ms). */
  pingMs?: number;
  /** The reconnection delay suggested to browsers (`retry:`), default 2,000 ms. */
  retryMs?: number;
  /** Extra response headers (e.g. the message id). */
  headers?: Record<string, string>;
  now?: () => Date;
}

export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** One frame as written on the wire (exported for tests and for writers that batch). */
export function sseFrame(event: SseEvent): string {
  const id = event.id === null || event.id === undefined ? '' : `id: ${String(event.id).replace(/[\r\n]/g, '')}\n`;
  const data = JSON.stringify(event.data ?? null);
  return `${id}event: ${event.event.replace(/[\r\n]/g, '')}\ndata: ${data}\n\n`;
}

export function openSse(koa: Context, options: SseOptions = {}): SseWriter {
  koa.respond = false;
  const out = koa.res;
  out.writeHead(200, {
    'Content-Type': SSE_CONTENT_TYPE,
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...options.headers,
  });
  koa.req.socket.setTimeout(0);
  koa.req.socket.setNoDelay?.(true);
  const abort = new AbortController();
  let closed = false;
  const onClose = () => finish();
  out.on('close', onClose);
  const now = options.now ?? (() => new Date());
  const pingMs = options.pingMs ?? 15_000;
  const timer = setInterval(() => void write(sseFrame({ event: 'ping', data: { at: now().toISOString() } })), pingMs);
  timer.unref?.();

  function finish() {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    out.off('close', onClose);
    abort.abort(new Error('the event stream closed'));
    if (!out.writableEnded) out.end();
  }

  async function write(chunk: string): Promise<void> {
    if (closed || out.destroyed) return;
    if (out.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        abort.signal.removeEventListener('abort', done);
        resolve();
      };
      out.once('drain', done);
      abort.signal.addEventListener('abort', done, { once: true });
    });
  }

  out.write(`retry: ${options.retryMs ?? 2000}\n\n`);
  return {
    signal: abort.signal,
    get closed() {
      return closed;
    },
    send: (event) => write(sseFrame(event)),
    close: finish,
  };
}

/** What a handler returns after `openSse` (the response is already streaming; Koa ignores it). */
export const sseReply = () => ({ status: 200, body: null });

/**
 * The id the client resumes after: the `Last-Event-ID` header, else `?lastEventId=`; null when
 * neither is present. `pattern` checks its form (default: up to 200 printable characters);
 * a malformed one answers 400 naming the header or the query field.
 */
export function lastEventIdOf(koa: Context, pattern: RegExp = /^[\x21-\x7e]{1,200}$/): string | null {
  const header = koa.get('last-event-id');
  const query = typeof koa.query?.lastEventId === 'string' ? koa.query.lastEventId : '';
  const raw = (header || query).trim();
  if (!raw) return null;
  if (!pattern.test(raw)) {
    throw new ValidationError([{ field: header ? 'headers.last-event-id' : 'query.lastEventId', message: 'must be the id of an event received earlier' }]);
  }
  return raw;
}

/** A wake-up source between reads of the log (`AppendWatch` of the stream-signals port fits). */
export interface LogWatch {
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export interface FollowLogOptions<C> {
  /** Where to start (exclusive): the cursor after the resumed event, or the start of the log. */
  after: C;
  /**
   * Reads the events after `after`: the SSE events to write (with their ids), the cursor after
   * them, and whether the stream is complete once they are written.
   */
  read(after: C): Promise<{ events: SseEvent[]; next: C; done: boolean }>;
  /** Wakes the follower when the log may have grown; without it the log is re-read every `pollMs`. */
  watch?: LogWatch;
  /** Longest wait between two reads (default 1,000 ms). */
  pollMs?: number;
  /** Close the response once done (default true). */
  closeWhenDone?: boolean;
}

/**
 * Replays and follows the log into `sse` until `read` says done or the client leaves. Resolves
 * when it stops; never rejects (a failed read ends the stream with an `error` event).
 */
export async function followLog<C>(sse: SseWriter, options: FollowLogOptions<C>): Promise<void> {
  let cursor = options.after;
  try {
    while (!sse.signal.aborted) {
      const page = await options.read(cursor);
      for (const event of page.events) {
        if (sse.signal.aborted) return;
        await sse.send(event);
      }
      cursor = page.next;
      if (page.done) break;
      if (page.events.length > 0) continue;
      if (options.watch) await options.watch.next(options.pollMs ?? 1000, sse.signal);
      else await sleep(options.pollMs ?? 1000, sse.signal);
    }
  } catch (err) {
    await sse.send({ event: 'error', data: { code: 'STREAM_FAILED', message: err instanceof Error ? err.message : 'the event stream failed' } }).catch(() => {});
  } finally {
    options.watch?.close();
    if (options.closeWhenDone !== false) sse.close();
  }
}
