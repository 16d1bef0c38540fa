import { expect } from 'chai';
import { errorFromResponse, readSse, retryAfterSeconds } from '../../infra/llm/http.js';

const headers = (h: Record<string, string>) => new Headers(h);

/** A streaming Response whose body arrives in exactly these chunks. */
function chunked(chunks: string[]) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

async function collect(response: Response) {
  const events = [];
  for await (const e of readSse(response)) events.push(e);
  return events;
}

describe('LLM HTTP helpers', () => {
  it('reads Retry-After in seconds, as an HTTP date, and retry-after-ms first', () => {
    expect(retryAfterSeconds(headers({ 'retry-after': '3' }))).to.equal(3);
    expect(retryAfterSeconds(headers({ 'retry-after': '0.25' }))).to.equal(0.25);
    expect(retryAfterSeconds(headers({ 'retry-after': '3', 'retry-after-ms': '150' }))).to.equal(0.15);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).to.equal(5);
    expect(retryAfterSeconds(headers({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }), now), 'a past date means now').to.equal(0);
    expect(retryAfterSeconds(headers({ 'retry-after': 'soon' }))).to.equal(undefined);
    expect(retryAfterSeconds(headers({}))).to.equal(undefined);
  });

  it("classifies failures and quotes the provider's own message", () => {
    const limited = errorFromResponse('anthropic', 429, headers({ 'retry-after': '7' }), JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
    expect(limited).to.include({ code: 'PROVIDER_RATE_LIMITED', status: 429, retryAfter: 7, provider: 'anthropic' });
    expect(limited.message).to.equal('anthropic answered 429: slow down');
    const failed = errorFromResponse('google', 500, headers({}), JSON.stringify({ error: { code: 500, message: 'internal', status: 'INTERNAL' } }));
    expect(failed).to.include({ code: 'PROVIDER_ERROR', status: 500, message: 'google answered 500: internal' });
    expect(failed.retryAfter).to.equal(undefined);
    const html = errorFromResponse('openai', 502, headers({}), '<html>\n  Bad gateway </html>');
    expect(html.message).to.equal('openai answered 502: <html> Bad gateway </html>');
    expect(html.toDetails()).to.deep.equal({ provider: 'openai', status: 502 });
  });

  it('parses server-sent events split anywhere across chunks', async () => {
    const events = await collect(
      chunked(['event: message_start\ndata: {"a"', ':1}\n\n: a comment\n\nevent: ping\r\ndata: {}\r\n\r\n', 'data: line one\ndata: line two\n\n', 'data: [DONE]']),
    );
    expect(events).to.deep.equal([
      { event: 'message_start', data: '{"a":1}' },
      { event: 'ping', data: '{}' },
      { event: null, data: 'line one\nline two' },
      { event: null, data: '[DONE]' },
    ]);
  });
});
