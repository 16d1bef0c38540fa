import { backoffDelay } from '../../lib/backoff.js';
import { sleep } from '../../lib/sleep.js';
import { LlmAbortError, LlmProviderError, badResponse } from './errors.js';
import type { PriceTable } from './prices.js';

/** What every adapter passes down: the provider's name for messages, and config's limits. */
export interface HttpLimits {
  timeoutMs: number;
  maxRetries: number;
}

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
}

const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529]);
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 8_000;

/**
 * One provider call's budget: the caller's signal and a deadline over the whole call (every
 * attempt, every wait between attempts, and reading a stream to its end), so LLM_TIMEOUT_MS is
 * what a caller actually waits at most. `signal` aborts the HTTP exchange for either reason;
 * `translate` tells which one it was.
 */
export class ProviderCall {
  readonly signal: AbortSignal;
  private readonly deadline: number;
  private readonly timeout = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly provider: string,
    private readonly limits: HttpLimits,
    private readonly caller?: AbortSignal,
  ) {
    this.deadline = Date.now() + limits.timeoutMs;
    this.timer = setTimeout(() => this.timeout.abort(new Error('deadline')), limits.timeoutMs);
    this.timer.unref?.();
    this.signal = caller ? AbortSignal.any([caller, this.timeout.signal]) : this.timeout.signal;
  }

  get maxRetries() {
    return this.limits.maxRetries;
  }

  remainingMs() {
    return this.deadline - Date.now();
  }

  /** Any failure inside the call, as the port promises it: abort, timeout, or a provider error. */
  translate(err: unknown): Error {
    if (this.caller?.aborted) return err instanceof LlmAbortError ? err : new LlmAbortError(this.provider, this.caller.reason);
    if (err instanceof LlmProviderError) return err;
    if (this.timeout.signal.aborted) {
      return new LlmProviderError({ provider: this.provider, code: 'PROVIDER_TIMEOUT', message: `${this.provider} gave no complete answer within ${this.limits.timeoutMs} ms` });
    }
    const reason = (err as { cause?: { code?: string; message?: string } })?.cause;
    const detail = reason?.code ?? reason?.message ?? (err as Error)?.message ?? String(err);
    return new LlmProviderError({ provider: this.provider, code: 'PROVIDER_ERROR', message: `${this.provider} could not be reached: ${detail}`, cause: err });
  }

  /** Waits before a retry, unless the wait would outlast the deadline: then `instead` is the answer now. */
  async pause(ms: number, instead: LlmProviderError): Promise<void> {
    if (ms >= this.remainingMs()) throw instead;
    if (!(await sleep(ms, this.signal))) throw this.signal.reason;
  }

  close() {
    clearTimeout(this.timer);
  }
}

/** Runs `work` inside one ProviderCall and turns whatever it throws into the port's errors. */
export async function withProviderCall<T>(provider: string, limits: HttpLimits, signal: AbortSignal | undefined, work: (call: ProviderCall) => Promise<T>): Promise<T> {
  if (signal?.aborted) throw new LlmAbortError(provider, signal.reason);
  const call = new ProviderCall(provider, limits, signal);
  try {
    return await work(call);
  } catch (err) {
    throw call.translate(err);
  } finally {
    call.close();
  }
}

/** Seconds to wait from `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date). */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') !== null && Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The provider's own explanation from its error body (all three put it at `error.message`), shortened. */
function providerMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string' && message) return message.slice(0, 500);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 200) || 'no details';
}

export function errorFromResponse(provider: string, status: number, headers: Headers, text: string): LlmProviderError {
  const retryAfter = retryAfterSeconds(headers);
  const message = `${provider} answered ${status}: ${providerMessage(text)}`;
  if (status === 429) return new LlmProviderError({ provider, code: 'PROVIDER_RATE_LIMITED', status, message, retryAfter });
  return new LlmProviderError({ provider, code: 'PROVIDER_ERROR', status, message, ...(retryAfter !== undefined && { retryAfter }) });
}

/** Exponential with jitter, for retries the provider gave no Retry-After for: 250 ms after the first failure (`attempt` 0), doubling to 8 s. */
const backoffMs = (attempt: number) => backoffDelay(attempt + 1, FIRST_BACKOFF_MS, MAX_BACKOFF_MS);

/**
 * Sends the request until it is answered 2xx, retrying 429, 5xx and unreachable servers up to
 * `maxRetries` times (honouring Retry-After). Other statuses fail at once: a 400 or 401 will not
 * get better by asking again. The answer's body is left for the caller to read.
 */
export async function send(call: ProviderCall, request: HttpRequest, maxRetries = call.maxRetries): Promise<Response> {
  const init: RequestInit = {
    method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
    headers: { accept: 'application/json', ...(request.body !== undefined && { 'content-type': 'application/json' }), ...request.headers },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal: call.signal,
  };
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(request.url, init);
    } catch (err) {
      if (call.signal.aborted) throw err;
      const unreachable = call.translate(err) as LlmProviderError;
      if (attempt >= maxRetries) throw unreachable;
      await call.pause(backoffMs(attempt), unreachable);
      continue;
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    const error = errorFromResponse(call.provider, response.status, response.headers, text);
    if (!RETRYABLE.has(response.status) || attempt >= maxRetries) throw error;
    await call.pause(error.retryAfter !== undefined ? error.retryAfter * 1000 : backoffMs(attempt), error);
  }
}

/** The body as JSON; anything else is PROVIDER_BAD_RESPONSE. */
export async function readJson(call: ProviderCall, response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw badResponse(call.provider, `invalid JSON (${text.slice(0, 80).replace(/\s+/g, ' ')}…)`, response.status);
  }
}

export async function getJson(call: ProviderCall, request: HttpRequest, maxRetries?: number): Promise<unknown> {
  return readJson(call, await send(call, request, maxRetries));
}

export interface SseEvent {
  event: string | null;
  data: string;
}

/** Server-sent events of a streaming answer, as they arrive; comments and empty events are skipped. */
export async function* readSse(response: Response): AsyncGenerator<SseEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  const parse = (block: string): SseEvent | null => {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    return data.length ? { event, data: data.join('\n') } : null;
  };
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let boundary: RegExpExecArray | null;
    while ((boundary = /\r?\n\r?\n/.exec(buffer))) {
      const block = buffer.slice(0, boundary.index);
      buffer = buffer.slice(boundary.index + boundary[0].length);
      const parsed = parse(block);
      if (parsed) yield parsed;
    }
  }
  buffer += decoder.decode();
  const last = parse(buffer);
  if (last) yield last;
}

/** One SSE data payload as JSON, or PROVIDER_BAD_RESPONSE. */
export function sseJson(provider: string, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw badResponse(provider, `invalid JSON in a stream event (${data.slice(0, 80)}…)`);
  }
}

/** `https://host/v1/` → `https://host/v1`: base URLs are joined with paths that start with a slash. */
export const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** How the registry configures an adapter. `apiKey` null: a server that needs none (a local vLLM or Ollama). */
export interface AdapterSettings {
  apiKey: string | null;
  baseUrl: string;
  limits: HttpLimits;
  /** Resolved price table (defaults + LLM_PRICES). */
  prices: PriceTable;
}
