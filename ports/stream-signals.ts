/**
 * Wakes waiters of this process when a stream gets an event: long polls and SSE streams wait on
 * it instead of polling the log. One subscription per process serves every waiter; the number of
 * waiters is bounded.
 */
export interface AppendWatch {
  /**
   * Resolves true when the stream got an event since the watch began or since the previous
   * `next`, false after `ms` or on abort. Callers re-read the stream either way (a wake can be
   * spurious, and a missed one only costs the fallback interval).
   */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export interface StreamSignals {
  /** Throws DomainError TOO_MANY_WAITERS (`unavailable`) when the process's bound is reached. */
  watch(streamId: string): AppendWatch;
  /** Waiters now (diagnostics, tests: proves nothing leaks). */
  readonly waiting: number;
  close(): Promise<void>;
}
