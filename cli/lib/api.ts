import { CliError, EXIT, type ExitCode } from './errors.js';
import { VERSION } from './version.js';

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

/** A small JSON-over-HTTP client for the flow service (fetch, bearer token, our error body). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
  ) {}

  requireToken(): void {
    if (!this.token) throw new CliError(`not signed in to ${this.baseUrl}: run flowctl login (or set FLOWCTL_TOKEN)`, EXIT.AUTH, 'NOT_SIGNED_IN');
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': `flowctl/${VERSION}`, ...options.headers };
    if (!options.anonymous) {
      this.requireToken();
      headers.authorization = `Bearer ${this.token}`;
    }
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method, headers, body: payload, signal });
      text = await res.text();
    } catch (err) {
      if (options.signal?.aborted) throw err;
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
        error?.message ?? `${method} ${path} answered ${res.status}`,
        error?.details,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
      );
    }
    return { status: res.status, body: body as T, headers: res.headers };
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
