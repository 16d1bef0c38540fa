import { CliError, EXIT, type ExitCode } from './errors.js';
import { VERSION } from './version.js';
import { apiBaseUrl, createFlowClient, type FlowClient } from '../../client/index.js';

export type { RequestBody, ResponseBody } from '../../client/index.js';

/** The service answered with an error: its HTTP status and our standard `{error: {code, message}}`. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    details?: unknown,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message, exitCodeOf(status), code, details);
  }
}

/** The request never got an answer: connection refused or reset, DNS, timeout. */
export class NetworkError extends CliError {
  constructor(message: string, cause?: unknown) {
    super(message, EXIT.UNREACHABLE, 'UNREACHABLE');
    this.cause = cause;
  }
}

function exitCodeOf(status: number): ExitCode {
  if (status === 401) return EXIT.AUTH;
  if (status === 404) return EXIT.NOT_FOUND;
  if (status === 400 || status === 422) return EXIT.USAGE;
  return EXIT.ERROR;
}

/** Transient: worth retrying the same request (the service restarts, a proxy dropped us, it is overloaded). */
export const isTransient = (err: unknown) =>
  err instanceof NetworkError || (err instanceof ApiError && (err.status === 502 || err.status === 503 || err.status === 504 || err.status === 429));

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Milliseconds before the request is given up as a network error (default 30 s). */
  timeoutMs?: number;
  /** Send no Authorization header even when a token is known. */
  anonymous?: boolean;
  signal?: AbortSignal;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The result of a call on the generated client: its data on success (errors were thrown as ApiError). */
type Answer<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/**
 * The flow service's API for flowctl: the typed client generated from the OpenAPI document
 * (`client/`, openapi-fetch) with flowctl's transport under it — bearer token, user agent, timeout,
 * our error body as `ApiError` (exit code by status), no answer as `NetworkError`.
 *
 *   const { flow } = await api.data(api.client.GET('/flows/{flowId}', { params: { path: { flowId } } }));
 *
 * `get`/`post`/`put`/`delete` take a concrete path for the few calls that want it untyped.
 */
export class ApiClient {
  /** Typed, authenticated: a request without a known token fails with NOT_SIGNED_IN before it is sent. */
  readonly client: FlowClient;
  /** Typed, never sends a token (device login). */
  readonly anonymous: FlowClient;

  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
  ) {
    const headers = { accept: 'application/json', 'user-agent': `flowctl/${VERSION}` };
    this.client = createFlowClient({ baseUrl, token, headers, fetch: this.transport() });
    this.client.use({ onRequest: () => this.requireToken() });
    this.anonymous = createFlowClient({ baseUrl, headers, fetch: this.transport() });
  }

  requireToken(): void {
    if (!this.token) throw new CliError(`not signed in to ${this.baseUrl}: run flowctl login (or set FLOWCTL_TOKEN)`, EXIT.AUTH, 'NOT_SIGNED_IN');
  }

  /** The data of a typed call (a 4xx/5xx never gets here: the transport threw it as ApiError). */
  async data<T>(call: Answer<T>): Promise<T> {
    const { data } = await call;
    return data as T;
  }

  /**
   * flowctl's fetch under the generated client: a timeout, network failures as NetworkError,
   * 4xx/5xx as ApiError with our error body, and a body that is always JSON to the client (empty → none,
   * text that is not JSON → that text as a JSON string), as flowctl has always read it.
   */
  transport(options: { timeoutMs?: number; signal?: AbortSignal } = {}) {
    return async (request: Request): Promise<Response> => {
      const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const signal = AbortSignal.any([timeout, request.signal, ...(options.signal ? [options.signal] : [])]);
      let res: Response;
      let text: string;
      try {
        res = await fetch(request, { signal });
        text = await res.text();
      } catch (err) {
        if (options.signal?.aborted || request.signal.aborted) throw err;
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        const why = timeout.aborted ? 'timed out' : (cause?.code ?? cause?.message ?? (err as Error).message);
        throw new NetworkError(`cannot reach ${this.baseUrl} (${why})`, err);
      }
      let body: any = undefined;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      if (res.status >= 400) {
        const error = body && typeof body === 'object' ? body.error : undefined;
        const retryAfter = Number(res.headers.get('retry-after'));
        throw new ApiError(
          res.status,
          error?.code ?? `HTTP_${res.status}`,
          error?.message ?? `${request.method} ${this.pathOf(request.url)} answered ${res.status}`,
          error?.details,
          Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
        );
      }
      const headers = new Headers(res.headers);
      headers.delete('content-length');
      headers.delete('content-encoding');
      if (body === undefined || res.status === 204 || res.status === 304) return new Response(null, { status: res.status, statusText: res.statusText, headers });
      headers.set('content-type', 'application/json');
      return new Response(typeof body === 'string' ? JSON.stringify(body) : text, { status: res.status, statusText: res.statusText, headers });
    };
  }

  /** `/flows/x` of `http://host/api/flows/x?y` (the path as the caller named it). */
  private pathOf(url: string): string {
    const base = new URL(apiBaseUrl(this.baseUrl)).pathname;
    const path = new URL(url).pathname;
    return path.startsWith(base) ? path.slice(base.length) || '/' : path;
  }

  /** An untyped call on a concrete path (`/flows/f_1`), through the same client and transport. */
  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const client = options.anonymous ? this.anonymous : this.client;
    const init = {
      params: { query: options.query },
      ...(options.body !== undefined ? { body: options.body } : {}),
      headers: options.headers,
      fetch: this.transport({ timeoutMs: options.timeoutMs, signal: options.signal }),
    };
    const { data, error, response } = await (client.request as (m: string, p: string, i: object) => Answer<T>)(method.toLowerCase(), path, init);
    return { status: response.status, body: (data ?? error) as T, headers: response.headers };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options).then((r) => r.body);
  }
  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body }).then((r) => r.body);
  }
  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body }).then((r) => r.body);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options).then((r) => r.body);
  }
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Exponential backoff with jitter: 250 ms, 500 ms, 1 s, … up to `capMs`. */
export const backoffMs = (attempt: number, capMs = 10_000) => {
  const base = Math.min(capMs, 250 * 2 ** Math.min(attempt, 16));
  return Math.round(base / 2 + Math.random() * (base / 2));
};
