import { createHash } from 'node:crypto';
import {
  ANY, BACKWARDS, END, EventStoreDBClient, FORWARDS, NO_STREAM, NotLeaderError, START, STREAM_EXISTS, StreamNotFoundError,
  UnavailableError, WrongExpectedVersionError, excludeSystemEvents, jsonEvent, streamNameFilter,
  type AllStreamResolvedEvent, type AppendExpectedRevision, type JSONType, type Position, type ResolvedEvent, type StreamingRead,
} from '@eventstore/db-client';
import { categoryOf, type EventMetadata, type RecordedEvent } from '../../domain/shared/events.js';
import {
  ConcurrencyError, type AppendResult, type EventStore, type EventSubscription, type ExpectedRevision, type NewEvent,
  type ReadAllOptions, type ReadStreamOptions, type SubscribeOptions,
} from '../../ports/event-store.js';
import type { RetentionPolicies } from '../../domain/shared/retention.js';
import { sleep } from '../../lib/sleep.js';

/*
 * Positions. The port speaks plain numbers; ESDB speaks {commit, prepare} BigInts. We expose
 * Number(commitPosition): commit positions are byte offsets in the transaction log and stay far
 * below 2^53 (9 PB) for any realistic log. For a non-transactional append (all gRPC appends)
 * commit == prepare, so an exclusive `after: n` maps back to {commit: n, prepare: n}.
 */
const toPosition = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

/**
 * ESDB requires UUID event ids (and may hand them back normalised). Anything but a lowercase UUID is
 * mapped to a stable name-based UUID and the original id is kept in the event metadata.
 */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function toUuid(id: string): string {
  const h = createHash('sha1').update(`event-id:${id}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

type StoredMetadata = EventMetadata & { schemaVersion: number; originalEventId?: string };

/** Null for system events (stream or type starting with `$`) and unresolved links. */
function toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const e = resolved.event;
  if (!e || e.streamId.startsWith('$') || e.type.startsWith('$')) return null;
  const stored = (e.metadata && typeof e.metadata === 'object' && !(e.metadata instanceof Uint8Array) ? e.metadata : {}) as Partial<StoredMetadata>;
  const { schemaVersion, originalEventId, ...metadata } = stored;
  const commit = e.position?.commit ?? resolved.commitPosition; // stream reads carry it from server 22.6 on
  return {
    id: originalEventId ?? e.id,
    type: e.type,
    streamId: e.streamId,
    revision: Number(e.revision),
    position: commit === undefined ? 0 : Number(commit),
    schemaVersion: typeof schemaVersion === 'number' ? schemaVersion : 1,
    data: e.isJson ? e.data : Buffer.from(e.data as Uint8Array).toString('base64'),
    metadata: metadata as EventMetadata,
  };
}

const toExpected = (expected: ExpectedRevision): AppendExpectedRevision =>
  expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : expected === 'stream_exists' ? STREAM_EXISTS : BigInt(expected);

export interface EventStoreDbOptions {
  /** Attempts after the first when the server is unavailable (the client reconnects but does not retry). */
  retries?: number;
  /** First backoff delay in ms; doubles per attempt, capped at 5 s. */
  backoffMs?: number;
  /** Operational categories get `$maxCount`/`$maxAge` stream metadata on their first append by this process. */
  retention?: RetentionPolicies;
}

/**
 * UNAVAILABLE arrives either converted (UnavailableError) or, from the client's server-feature
 * probe that precedes the first append, as a raw gRPC ServiceError with code 14.
 */
const GRPC_UNAVAILABLE = 14;
const retryable = (err: unknown) =>
  err instanceof UnavailableError || err instanceof NotLeaderError || (err as { code?: unknown } | null)?.code === GRPC_UNAVAILABLE;

export class EventStoreDbEventStore implements EventStore {
  readonly adapter = 'eventstoredb';
  readonly client: EventStoreDBClient;
  private readonly retries: number;
  private readonly subscriptions = new Set<EventSubscription>();
  /** Backoff before retry number `attempt + 1`. */
  private readonly backoff: (attempt: number) => number;

  private readonly retention: RetentionPolicies;

  constructor(connectionString: string, options: EventStoreDbOptions = {}) {
    this.client = EventStoreDBClient.connectionString(connectionString);
    this.retention = options.retention ?? {};
    this.retries = options.retries ?? 5;
    this.backoff = (attempt) => Math.min((options.backoffMs ?? 100) * 2 ** attempt, 5000);
  }

  private async withRetry<T>(action: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await action();
      } catch (err) {
        if (!retryable(err) || attempt >= this.retries) throw err;
        await sleep(this.backoff(attempt));
      }
    }
  }

  /** Streams whose `$maxCount`/`$maxAge` this process has already set (setting it again is harmless). */
  private readonly retained = new Set<string>();

  private async applyRetention(streamId: string): Promise<void> {
    const policy = this.retention[categoryOf(streamId)];
    if (!policy || this.retained.has(streamId)) return;
    if (policy.maxCount === undefined && policy.maxAgeSeconds === undefined) return;
    await this.withRetry(() =>
      this.client.setStreamMetadata(streamId, {
        ...(policy.maxCount !== undefined && { maxCount: policy.maxCount }),
        ...(policy.maxAgeSeconds !== undefined && { maxAge: policy.maxAgeSeconds }),
      }),
    );
    this.retained.add(streamId);
  }

  /**
   * A summing-up event (retention's `summarizedBy`) hides every earlier event of its stream with
   * `$tb`; the scavenge reclaims them. A crash between the append and this leaves them readable
   * until the next summing-up append of the stream (the SQLite adapter does both in one transaction).
   */
  private async truncateAtSummary(streamId: string, events: NewEvent[], lastRevision: number): Promise<void> {
    const type = this.retention[categoryOf(streamId)]?.summarizedBy;
    let index = -1;
    events.forEach((e, i) => {
      if (type !== undefined && e.type === type) index = i;
    });
    if (index < 0) return;
    const truncateBefore = lastRevision - (events.length - 1 - index);
    await this.withRetry(() => this.client.setStreamMetadata(streamId, { truncateBefore }));
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    await this.applyRetention(streamId);
    const data = events.map((e) => {
      const uuid = UUID_RE.test(e.id) ? e.id : toUuid(e.id);
      const metadata: StoredMetadata = { ...e.metadata, schemaVersion: e.schemaVersion ?? 1 };
      if (uuid !== e.id) metadata.originalEventId = e.id;
      return jsonEvent({ id: uuid, type: e.type, data: (e.data ?? null) as JSONType, metadata });
    });
    try {
      // Same event ids on retry: ESDB treats a repeated append as idempotent, not as a conflict.
      const result = await this.withRetry(() => this.client.appendToStream(streamId, data, { expectedRevision: toExpected(expected) }));
      const revision = Number(result.nextExpectedRevision);
      await this.truncateAtSummary(streamId, events, revision);
      return { revision, position: Number(result.position?.commit ?? 0n) };
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = err.actualVersion;
        throw new ConcurrencyError(streamId, expected, actual === 'no_stream' || actual < 0n ? 'no_stream' : Number(actual));
      }
      throw err;
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    return this.withRetry(async () => {
      const out: RecordedEvent[] = [];
      if (options.maxCount === 0) return out;
      const read = this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
        ...(options.maxCount === undefined ? {} : { maxCount: options.maxCount }),
      });
      try {
        // A missing stream is reported while iterating, not when readStream() is called.
        for await (const resolved of read) {
          const event = toRecorded(resolved);
          if (event) out.push(event);
        }
      } catch (err) {
        if (err instanceof StreamNotFoundError) return [];
        throw err;
      }
      return out;
    });
  }

  /**
   * Reads forwards and filters on our side (6.2.1's readAll has no server-side filter), so
   * `maxCount` counts returned events, not scanned ones. The read is cancelled once we have enough.
   */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after ?? 0;
    const max = options.maxCount ?? 1000;
    const categories = options.categories?.length ? new Set(options.categories) : null;
    return this.withRetry(async () => {
      const out: RecordedEvent[] = [];
      if (max <= 0) return out;
      const read = this.client.readAll({ direction: FORWARDS, fromPosition: after > 0 ? toPosition(after) : START });
      await collect(read, (resolved) => {
        const event = toRecorded(resolved);
        // Reading $all from a position includes the event at that position; ours is exclusive.
        if (!event || event.position <= after) return true;
        if (categories && !categories.has(categoryOf(event.streamId))) return true;
        out.push(event);
        return out.length < max;
      });
      return out;
    });
  }

  subscribe(options: SubscribeOptions = {}): EventSubscription {
    const categories = options.categories?.length ? options.categories : null;
    const client = this.client;
    const { retries, backoff } = this;
    let closed = false;
    let wake: (() => void) | null = null;
    let current: ReturnType<EventStoreDBClient['subscribeToAll']> | null = null;

    const open = (after: number) =>
      client.subscribeToAll({
        fromPosition: after > 0 ? toPosition(after) : START, // exclusive: starts after `after`
        // One filter per subscription; a prefix filter already skips `$` streams.
        filter: categories ? streamNameFilter({ prefixes: categories.map((c) => `${c}-`) }) : excludeSystemEvents(),
      });

    async function* iterate(): AsyncGenerator<RecordedEvent> {
      let after = options.after ?? 0;
      let failures = 0;
      while (!closed) {
        current = open(after);
        try {
          for await (const resolved of current) {
            if (closed) return;
            const event = toRecorded(resolved as AllStreamResolvedEvent);
            if (!event || event.position <= after) continue;
            if (categories && !categories.includes(categoryOf(event.streamId))) continue;
            failures = 0;
            after = event.position;
            yield event;
          }
          if (closed) return;
          throw new Error('EventStoreDB subscription ended unexpectedly');
        } catch (err) {
          if (closed) return;
          if (!retryable(err) || failures >= retries) throw err;
          const ms = backoff(failures++);
          await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, ms)));
        } finally {
          await stop(current);
        }
      }
    }

    async function stop(sub: typeof current) {
      await sub?.unsubscribe().catch(() => undefined);
      sub?.destroy();
    }

    const iterator = iterate();
    const subscriptions = this.subscriptions;
    const subscription: EventSubscription = {
      [Symbol.asyncIterator]: () => iterator,
      async close() {
        closed = true;
        subscriptions.delete(subscription);
        wake?.();
        await stop(current); // ends a pending `for await` in iterate()
        await iterator.return(undefined);
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<number> {
    return this.withRetry(async () => {
      let head = 0;
      const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END });
      await collect(read, (resolved) => {
        const event = toRecorded(resolved);
        if (event) head = event.position;
        return !event;
      });
      return head;
    });
  }

  /** EventStoreDB tells neither an event count nor a size through the client: the head (commit) position only. */
  async stats() {
    return { headPosition: await this.headPosition(), events: null, bytes: null };
  }

  /** One-event read with our own timeout: reads and subscriptions ignore the `deadline` option in 6.2.1. */
  async health(timeoutMs = 5000): Promise<{ ok: boolean; detail?: string }> {
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([collect(read, () => false), timeout]);
      return { ok: true };
    } catch (err) {
      await read.cancel().catch(() => undefined);
      return { ok: false, detail: (err as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends open subscriptions (their `for await` loops finish), then closes the gRPC channel. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

/** Iterates a read until `onEvent` returns false or the read ends, then cancels the gRPC call. */
async function collect(read: StreamingRead<AllStreamResolvedEvent>, onEvent: (e: AllStreamResolvedEvent) => boolean): Promise<void> {
  let stopped = false;
  try {
    for await (const resolved of read) {
      if (!onEvent(resolved)) {
        stopped = true;
        break;
      }
    }
  } finally {
    if (stopped) await read.cancel().catch(() => undefined);
  }
}
