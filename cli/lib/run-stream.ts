import { createParser } from 'eventsource-parser';
import { apiBaseUrl } from '../../client/index.js';
import { ApiError, backoffMs, NetworkError, sleep, type ApiClient } from './api.js';
import { VERSION } from './version.js';
import type { RunEvent } from './run-events.js';

/**
 * A run's events live from `GET /processes/{id}/stream` (Server-Sent Events): each frame is one
 * event of the run, its id the revision. A dropped connection is taken up again with
 * `Last-Event-ID`, so nothing is missed or repeated. Yields `'unsupported'` (and stops) when the
 * service has no such route (an older service): the caller polls instead.
 */
export async function* streamRunEvents(api: ApiClient, processId: string, options: { fromRevision: number; signal?: AbortSignal; isFinal(event: RunEvent): boolean }): AsyncGenerator<RunEvent | 'unsupported'> {
  let next = options.fromRevision;
  let failures = 0;
  const url = `${apiBaseUrl(api.baseUrl)}/processes/${encodeURIComponent(processId)}/stream`;
  while (!options.signal?.aborted) {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'user-agent': `flowctl/${VERSION}` };
    if (api.token) headers.authorization = `Bearer ${api.token}`;
    if (next > 0) headers['last-event-id'] = String(next - 1);
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: options.signal });
    } catch (err) {
      if (options.signal?.aborted) return;
      if (++failures > 60) throw new NetworkError(`cannot reach ${api.baseUrl} (${(err as Error).message})`, err);
      await sleep(backoffMs(failures), options.signal);
      continue;
    }
    if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
      const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: unknown } } | null;
      const code = body?.error?.code;
      // The route itself is missing (not the run): an older service.
      if (res.status === 404 && code !== 'PROCESS_NOT_FOUND') {
        yield 'unsupported';
        return;
      }
      if ([502, 503, 504, 429].includes(res.status) && ++failures <= 60) {
        await sleep(backoffMs(failures), options.signal);
        continue;
      }
      throw new ApiError(res.status, code ?? `HTTP_${res.status}`, body?.error?.message ?? res.statusText, body?.error?.details);
    }
    failures = 0;
    const queue: RunEvent[] = [];
    const parser = createParser({
      onEvent(message) {
        if (message.event === 'ping' || message.id === undefined) return;
        queue.push(JSON.parse(message.data) as RunEvent);
      },
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
        while (queue.length > 0) {
          const event = queue.shift()!;
          if (event.revision < next) continue;
          next = event.revision + 1;
          yield event;
          if (options.isFinal(event)) return;
        }
      }
    } catch (err) {
      if (options.signal?.aborted) return;
      // The connection dropped mid-stream: take it up again after what was seen.
      void err;
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    // Ended before the run did (the service restarted): a short pause, then resume.
    await sleep(backoffMs(1), options.signal);
  }
}
