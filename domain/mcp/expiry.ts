/**
 * When a request on an MCP server is no longer worth serving. The time comes in as an argument:
 * the worker passes its clock's now.
 */

/** A call request older than its timeout plus this is one nobody waits for any more. */
export const MCP_EXPIRY_MARGIN_MS = 30_000;
/** A request younger than this is fresh from the bus: no replay can have answered it yet. */
export const MCP_REPLAY_AGE_MS = 2_000;

const ageOf = (requestedAt: string, now: Date) => now.getTime() - Date.parse(requestedAt);

/**
 * Its caller stopped waiting long ago (a replay after a crash, a backlog): answered
 * MCP_REQUEST_EXPIRED instead of being run, since tool calls must not run twice or late.
 */
export function isMcpRequestExpired(requestedAt: string, timeoutMs: number, now: Date): boolean {
  return ageOf(requestedAt, now) > timeoutMs + MCP_EXPIRY_MARGIN_MS;
}

/** Old enough to be a replay whose outcome may already be in the log (worth one read to find out). */
export function mayBeReplayed(requestedAt: string, now: Date): boolean {
  return ageOf(requestedAt, now) > MCP_REPLAY_AGE_MS;
}

/** A pending connect made before this instant is presumed lost (its worker died) and may be asked again. */
export function connectStaleBefore(now: Date, connectWaitMs: number): string {
  return new Date(now.getTime() - connectWaitMs).toISOString();
}

export const MCP_REQUEST_EXPIRED = { code: 'MCP_REQUEST_EXPIRED', message: 'the request was not served before its caller stopped waiting; it was not run' } as const;
