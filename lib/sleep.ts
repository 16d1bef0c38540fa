/**
 * Waits `ms`, or less when `signal` aborts: resolves true when the time ran out, false when it was
 * aborted (at once if it already was). Never rejects, and leaves no listener on the signal either way,
 * so a long-lived signal (a process's stop) can be passed to any number of sleeps.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      resolve(false);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
