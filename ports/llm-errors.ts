/**
 * The two ways an LLM call ends without an answer. Declared with the port so callers (routes,
 * commands, the run engine) tell failures apart without reaching into an adapter.
 */

export type LlmErrorCode =
  | 'PROVIDER_ERROR'
  | 'PROVIDER_TIMEOUT'
  | 'PROVIDER_RATE_LIMITED'
  | 'PROVIDER_BAD_RESPONSE'
  | 'PROVIDER_NOT_CONFIGURED';

/** The provider did not give a usable answer (after the retries it was worth). Messages never contain credentials. */
export class LlmProviderError extends Error {
  readonly provider: string;
  readonly code: LlmErrorCode;
  /** HTTP status the provider answered, when it answered. */
  readonly status?: number;
  /** Seconds the provider asked us to wait (429 / 503 `Retry-After`). */
  readonly retryAfter?: number;

  constructor(input: { provider: string; code: LlmErrorCode; message: string; status?: number; retryAfter?: number; cause?: unknown }) {
    super(input.message, input.cause === undefined ? undefined : { cause: input.cause });
    this.name = 'LlmProviderError';
    this.provider = input.provider;
    this.code = input.code;
    if (input.status !== undefined) this.status = input.status;
    if (input.retryAfter !== undefined) this.retryAfter = input.retryAfter;
  }

  /** What an error body's `details` may show. */
  toDetails(): { provider: string; status?: number; retryAfter?: number } {
    return { provider: this.provider, ...(this.status !== undefined && { status: this.status }), ...(this.retryAfter !== undefined && { retryAfter: this.retryAfter }) };
  }
}

/**
 * The caller aborted (run stopped, client gone). Named `AbortError` like the DOM's, so code that
 * checks `err.name === 'AbortError'` works, but it is its own class: `isLlmAbort(err)` never
 * mistakes a provider timeout (LlmProviderError PROVIDER_TIMEOUT) for a stop.
 */
export class LlmAbortError extends Error {
  constructor(readonly provider: string, reason?: unknown) {
    super(`${provider} call aborted${reason instanceof Error && reason.message ? `: ${reason.message}` : ''}`);
    this.name = 'AbortError';
  }
}

export const isLlmAbort = (err: unknown): err is LlmAbortError => err instanceof LlmAbortError;
export const isLlmProviderError = (err: unknown): err is LlmProviderError => err instanceof LlmProviderError;

