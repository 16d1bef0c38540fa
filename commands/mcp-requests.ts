import { randomUUID } from 'node:crypto';
import { MCP_OUTCOMES, mcpEventSchemas, mcpServerStreamId, type McpEvent, type McpEventType } from '../domain/mcp/index.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { sleep } from '../lib/sleep.js';
import type { EventStore } from '../ports/event-store.js';
import { metadataOf, type CommandContext } from './handle.js';

/**
 * Requests and outcomes of calls (tool calls, listings, reads) are appended with expected
 * revision 'any': they change no state a decision depends on, so concurrent calls on one server
 * never conflict. The caller checks the server's state first (loadMcpServer).
 */
export async function appendMcpEvents(store: EventStore, context: CommandContext, serverId: string, events: McpEvent[]) {
  for (const e of events) {
    const schema = mcpEventSchemas[e.type];
    const checked = schema.safeParse(e.data);
    if (!checked.success) throw new Error(`${e.type} does not match its schema: ${checked.error.message}`);
  }
  const metadata = metadataOf(context);
  return store.append(
    mcpServerStreamId(serverId),
    events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
    'any',
  );
}

export type Recorded<E extends McpEvent = McpEvent> = RecordedEvent & E;

const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 40;

/**
 * Waits for the outcome of a request by reading the server's stream after the request's
 * revision (the log, not a read model: the outcome is an event that any API instance can read).
 * The interval starts at a few milliseconds and doubles to 40 ms, so quick calls answer quickly
 * and slow ones cost few reads; `nap` (the runtime's) ends a sleep early when this process's worker
 * appended something for the request. Returns null on timeout or abort. `onEvent` sees every event of
 * the stream on the way (progress notifications).
 */
export async function waitForMcpOutcome(
  store: EventStore,
  serverId: string,
  request: { type: McpEventType; requestId: string; revision: number },
  timeoutMs: number,
  options: { signal?: AbortSignal; onEvent?: (e: Recorded) => void; nap?: (key: string, ms: number, signal?: AbortSignal) => Promise<void> } = {},
): Promise<Recorded | null> {
  const outcomes = MCP_OUTCOMES[request.type] ?? [];
  const streamId = mcpServerStreamId(serverId);
  const deadline = Date.now() + timeoutMs;
  let from = request.revision + 1;
  let delay = FIRST_POLL_MS;
  while (Date.now() < deadline && !options.signal?.aborted) {
    const events = (await store.readStream(streamId, { fromRevision: from })) as Recorded[];
    for (const e of events) {
      from = e.revision + 1;
      const data = e.data as { requestId?: unknown };
      if (data.requestId !== request.requestId) continue;
      options.onEvent?.(e);
      if (outcomes.includes(e.type)) return e;
    }
    const ms = Math.min(delay, Math.max(1, deadline - Date.now()));
    await (options.nap ? options.nap(request.requestId, ms, options.signal) : sleep(ms, options.signal));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
  return null;
}
