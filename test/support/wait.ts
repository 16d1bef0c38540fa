/**
 * Waiting for a condition instead of for a fixed time: `probe` is asked every `intervalMs` until it
 * answers something truthy (which is returned); after `timeoutMs` the wait fails naming `what`.
 * Imports nothing from the service, so unit and contract tests use it without building one.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
