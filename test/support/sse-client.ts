/** A Server-Sent Events client for tests and benchmarks: reads an answer's frames with their event names and ids. */
/** One SSE answer read to its end (or until `until` says stop): the events with their ids. */
export interface SseRead {
  status: number;
  headers: Headers;
  events: Array<{ event: string; id: string | null; data: any }>;
  /** ms from the request to the first byte of the body. */
  firstByteMs: number;
}

export async function readSse(url: string, init: RequestInit, until?: (e: { event: string; data: any }) => boolean, controller = new AbortController()): Promise<SseRead> {
  const started = performance.now();
  const res = await fetch(url, { ...init, signal: controller.signal });
  const events: SseRead['events'] = [];
  let firstByteMs = -1;
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    return { status: res.status, headers: res.headers, events: [{ event: 'body', id: null, data: await res.json().catch(() => null) }], firstByteMs };
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (firstByteMs < 0) firstByteMs = performance.now() - started;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        let id: string | null = null;
        let data = '';
        for (const line of frame.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (!data) continue;
        const e = { event, id, data: JSON.parse(data) };
        events.push(e);
        if (until?.(e)) {
          controller.abort();
          return { status: res.status, headers: res.headers, events, firstByteMs };
        }
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return { status: res.status, headers: res.headers, events, firstByteMs };
}

