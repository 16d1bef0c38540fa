import { randomUUID } from 'node:crypto';
import { DomainError, fold, type Decider } from '../domain/shared/decider.js';
import { wasChecked, type DomainEvent, type EventMetadata } from '../domain/shared/events.js';
import { ConcurrencyError, type EventStore, type ExpectedRevision, type PendingStream } from '../ports/event-store.js';
import { findSnapshot, saveSnapshot, snapshotDue } from './snapshots.js';
import { oneWriterPerStream } from './stream-writers.js';
import { currentTraceparent } from '../lib/tracing.js';

/** Who and why: becomes the metadata of every event the command appends (`now` its `occurredAt`). */
export interface CommandContext extends Omit<EventMetadata, 'occurredAt'> {
  now: Date;
}

/** A command as its caller gives it: the handler stamps it with the context's time. */
export type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

export interface HandleOptions<C, S, E extends DomainEvent> {
  streamId: string;
  decider: Decider<C, S, E>;
  command: C;
  context: CommandContext;
  /** A client's If-Match: the stream revision it saw; a mismatch is not retried (412). */
  expectedRevision?: number;
  maxAttempts?: number;
  /**
   * Decide on the state this process folded last (the cache below) without reading the stream
   * first, for a stream this process writes almost alone (a run's executor: no re-read per node).
   * Still safe: the append's expected revision rejects a stale state (then the stream is read and
   * the command decided again), and a decision refused on the cached state is decided again on a
   * fresh read before the refusal is reported.
   */
  fromCache?: boolean;
  /**
   * The stream is one whose name the caller just made (a new run's processId): decide on the
   * decider's initial state and append with `no_stream`, reading neither the stream nor its
   * snapshots first. Still safe: should the stream exist after all, the append is refused and the
   * command is decided again on the stream as read (which refuses it, e.g. RUN_ALREADY_EXISTS);
   * a decision refused on the assumed empty state is decided again on a read before it is reported.
   */
  newStream?: boolean;
  /**
   * A stream not in the log yet whose events this caller holds (PendingStream): while it is not
   * flushed, the command is decided on the held state and its events are added to the held ones
   * (with this command's metadata) instead of appended; `position` is then null. Once flushed, the
   * option is ignored.
   */
  pending?: PendingStream<S>;
}

/** Several commands decided in turn, each on the state the events before it left, appended together. */
export interface HandleManyOptions<C, S, E extends DomainEvent> extends Omit<HandleOptions<C, S, E>, 'command'> {
  /** Each builds its command from the state after the previous ones' events (e.g. the attempt a start recorded). */
  commands: ReadonlyArray<(state: S) => C>;
}

export interface HandleResult<S, E> {
  events: E[];
  state: S;
  /** Revision of the stream after the command (-1 when the stream does not exist). */
  revision: number;
  /** Global position of the last appended event, or null when nothing was appended. */
  position: number | null;
}

/** The stream moved on while we decided, more often than we were willing to retry. */
export class ConflictError extends DomainError {
  constructor(streamId: string) {
    super('CONCURRENCY_CONFLICT', `${streamId} was changed concurrently; try again`, 'conflict');
  }
}

export class PreconditionFailedError extends DomainError {
  constructor(streamId: string, expected: number, actual: number) {
    super('PRECONDITION_FAILED', `${streamId} is at version ${actual}, not ${expected}`, 'precondition_failed', { expected, actual });
  }
}

export function metadataOf(context: CommandContext): EventMetadata {
  const metadata: EventMetadata = {
    actorId: context.actorId,
    orgId: context.orgId,
    workspaceId: context.workspaceId,
    correlationId: context.correlationId,
    causationId: context.causationId,
    requestId: context.requestId,
    occurredAt: context.now.toISOString(),
  };
  // The span deciding this command: the consumer of the event continues its trace (lib/tracing.ts).
  const traceparent = currentTraceparent();
  if (traceparent) metadata.traceparent = traceparent;
  return metadata;
}

const CACHE_LIMIT = 10_000;
/** Settled states (finished runs) kept: enough for the reads that follow an aggregate's last step. */
const SETTLED_CACHE_LIMIT = 500;

/**
 * `snapshotAt`: revision of the stream's newest snapshot this process knows of (-1: none).
 * `position`: global position of the event at `revision`, when this process saw it (its own append
 * or a read); null when the state came from a snapshot and nothing was read after it.
 */
type Cached = { revision: number; state: unknown; snapshotAt: number; position: number | null };
/** One decider's folded states: live ones, and settled ones in their own smaller LRU. */
interface StateCache {
  live: Map<string, Cached>;
  settled: Map<string, Cached>;
}

interface StoreRuntime {
  /**
   * Folded states by decider and stream, so a command reads only the events appended since the last
   * one instead of the whole stream. Sound because evolve is pure and never mutates its input; a
   * stale entry only means more events to read (other processes' appends are read as usual).
   * Bounded by count (a run's state holds its bounded outputs): 10,000 live and 500 settled states
   * per decider and event store.
   */
  caches: WeakMap<object, StateCache>;
  /** Attempts of a command without a client precondition (COMMAND_MAX_ATTEMPTS). */
  maxAttempts: number;
}

/**
 * Attempts of a command without a client precondition, unless configured. With one writer per
 * stream in this process (stream-writers.ts), a conflict means a writer in another process
 * appended first: that writer made progress, so waiting a little and deciding again converges; the
 * attempts only bound a pathological storm across many processes.
 */
export const DEFAULT_COMMAND_MAX_ATTEMPTS = 25;

/**
 * The handler's state (the folded-state caches and COMMAND_MAX_ATTEMPTS) of each event store. Held
 * by the store instance, not by the module: the container builds one store per service, so two
 * services in one process (tests) or a service rebuilt in place share nothing, while every handler
 * of a service (they all take the store) shares its cache without a parameter more. A cache only
 * describes the streams of the store it is keyed by, and is checked against it at every read.
 */
const runtimes = new WeakMap<EventStore, StoreRuntime>();

function runtimeOf(store: EventStore): StoreRuntime {
  let runtime = runtimes.get(store);
  if (!runtime) runtimes.set(store, (runtime = { caches: new WeakMap(), maxAttempts: DEFAULT_COMMAND_MAX_ATTEMPTS }));
  return runtime;
}

/** COMMAND_MAX_ATTEMPTS of the commands handled on `store`, set by the composition root. */
export function configureCommands(store: EventStore, options: { maxAttempts: number }): void {
  runtimeOf(store).maxAttempts = options.maxAttempts;
}

function cacheFor(store: EventStore, decider: object): StateCache {
  const byDecider = runtimeOf(store).caches;
  let cache = byDecider.get(decider);
  if (!cache) byDecider.set(decider, (cache = { live: new Map(), settled: new Map() }));
  return cache;
}

const cachedIn = (cache: StateCache, streamId: string) => cache.live.get(streamId) ?? cache.settled.get(streamId);

/** The folded state of a stream through the same cache the handler uses: cheap for a stream read often (a run's executor). */
export async function loadState<S>(store: EventStore, streamId: string, decider: Decider<any, S, any>): Promise<{ state: S; revision: number }> {
  const { state, revision } = await load<S, DomainEvent>(store, streamId, decider as unknown as Decider<unknown, S, DomainEvent>);
  return { state, revision };
}

/**
 * Folds from the cached state, else from the stream's newest snapshot (long streams), else from
 * the first event; then snapshots the result when the stream has grown SNAPSHOT_EVERY past its last one.
 */
async function load<S, E>(store: EventStore, streamId: string, decider: Decider<unknown, S, DomainEvent>): Promise<{ state: S; revision: number; snapshotAt: number }> {
  const start = (cachedIn(cacheFor(store, decider), streamId) as (Cached & { state: S }) | undefined) ?? (await fromSnapshot(store, streamId, decider));
  const fresh = await store.readStream(streamId, start ? { fromRevision: start.revision + 1 } : undefined);
  const state = fold(decider.evolve, start ? start.state : decider.initialState, fresh as unknown as DomainEvent[]);
  const last = fresh.length > 0 ? fresh[fresh.length - 1] : undefined;
  const revision = last ? last.revision : (start?.revision ?? -1);
  const position = last ? last.position : (start?.position ?? null);
  const snapshotAt = await remember(store, decider, streamId, revision, position, state, start?.snapshotAt ?? -1);
  return { state, revision, snapshotAt };
}

async function fromSnapshot<S>(store: EventStore, streamId: string, decider: Decider<unknown, S, DomainEvent>): Promise<(Cached & { state: S }) | undefined> {
  const snapshot = await findSnapshot(store, streamId, decider);
  return snapshot ? { ...snapshot, snapshotAt: snapshot.revision, position: null } : undefined;
}

/**
 * The folded state this process last saw of a stream, without reading it (undefined when not
 * cached); `position` is the global position of its last event when this process knows it.
 */
export function cachedState<S>(store: EventStore, streamId: string, decider: Decider<any, S, any>): { state: S; revision: number; snapshotAt: number; position: number | null } | undefined {
  return cachedIn(cacheFor(store, decider), streamId) as { state: S; revision: number; snapshotAt: number; position: number | null } | undefined;
}

/** Caches the folded state, first snapshotting it when due; returns the revision of the newest snapshot known (-1: none). */
async function remember<S>(store: EventStore, decider: Decider<any, S, any>, streamId: string, revision: number, position: number | null, state: S, snapshotAt: number): Promise<number> {
  if (revision < 0) return snapshotAt;
  if (snapshotDue(store, decider, revision, snapshotAt)) {
    // Counted as taken even when not stored (too large): retried SNAPSHOT_EVERY events later, not at every command.
    await saveSnapshot(store, streamId, decider, revision, state);
    snapshotAt = revision;
  }
  const cache = cacheFor(store, decider);
  cache.live.delete(streamId);
  cache.settled.delete(streamId);
  const settled = decider.settled?.(state) === true;
  const into = settled ? cache.settled : cache.live;
  // Re-inserted last: Map order doubles as least-recently-used order.
  into.set(streamId, { revision, state, snapshotAt, position });
  if (into.size > (settled ? SETTLED_CACHE_LIMIT : CACHE_LIMIT)) into.delete(into.keys().next().value!);
  return snapshotAt;
}

/** Load, fold, decide, append with the expected revision, one writer per stream in this process; retry another process's conflict a bounded number of times. */
export function handleCommand<C, S, E extends DomainEvent>(store: EventStore, options: HandleOptions<C, S, E>): Promise<HandleResult<S, E>> {
  const { command, ...rest } = options;
  return handleCommands(store, { ...rest, commands: [() => command] });
}

/**
 * handleCommand for a sequence: every command is decided on the state the previous ones' events
 * left, and all their events are appended in ONE append (one expected-revision check, one
 * transaction). A refusal of any command appends nothing.
 */
export function handleCommands<C, S, E extends DomainEvent>(store: EventStore, options: HandleManyOptions<C, S, E>): Promise<HandleResult<S, E>> {
  return oneWriterPerStream(store, options.streamId, () => decideAndAppend(store, options));
}

/** The longest pause between two attempts, in ms: jittered, doubling from 1 ms. */
const MAX_BACKOFF_MS = 50;

const pause = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** attempt)));

/** A stream whose events the caller will hold (see PendingStream), starting empty. */
export function pendingStream<S>(streamId: string, decider: Decider<any, S, any>): PendingStream<S> {
  return { streamId, state: decider.initialState, revision: -1, events: [], flushed: false };
}

/**
 * Appends the events held for a pending stream, all at once with `no_stream`, in turn with the
 * stream's other writers of this process, and caches the state they lead to; later calls do
 * nothing. Resolves with the position of the last event (null when nothing was held). A failed
 * append keeps the events held (the caller's error; a later flush tries again).
 */
export function flushPending<S>(store: EventStore, decider: Decider<any, S, any>, pending: PendingStream<S>): Promise<number | null> {
  return oneWriterPerStream(store, pending.streamId, async () => {
    if (pending.flushed) return null;
    if (pending.events.length === 0) {
      pending.flushed = true;
      return null;
    }
    let result;
    try {
      result = await store.append(pending.streamId, pending.events, 'no_stream');
    } catch (err) {
      // Only this writer knows the stream's name: that it exists is not a race to retry.
      if (err instanceof ConcurrencyError) throw new ConflictError(pending.streamId);
      throw err;
    }
    pending.flushed = true;
    pending.events = [];
    await remember(store, decider, pending.streamId, result.revision, result.position, pending.state, -1);
    return result.position;
  });
}

/** Decides the commands on the held state of a pending stream and holds their events too. */
function decideIntoPending<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, options: HandleManyOptions<C, S, E>, pending: PendingStream<S>): HandleResult<S, E> {
  const events: E[] = [];
  let next = pending.state;
  for (const commandOf of options.commands) {
    const decided = decider.decide(commandOf(next), next);
    if (decided.length === 0) continue;
    events.push(...decided);
    next = fold(decider.evolve, next, decided);
  }
  if (events.length > 0) {
    assertEventShapes(decider, events);
    const metadata = metadataOf(options.context);
    pending.events.push(...events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })));
    pending.state = next;
    pending.revision += events.length;
  }
  return { events, state: next, revision: pending.revision, position: null };
}

async function decideAndAppend<C, S, E extends DomainEvent>(store: EventStore, options: HandleManyOptions<C, S, E>): Promise<HandleResult<S, E>> {
  const { streamId } = options;
  const decider = options.decider as unknown as Decider<C, S, E>;
  if (options.pending && !options.pending.flushed) return decideIntoPending(decider, options, options.pending);
  const maxAttempts = options.expectedRevision === undefined ? (options.maxAttempts ?? runtimeOf(store).maxAttempts) : 1;
  let useCache = options.fromCache === true;
  let assumeNew = options.newStream === true && options.expectedRevision === undefined;
  for (let attempt = 1; ; attempt++) {
    // A state not read for this attempt: the cached one, or the empty state of a brand-new stream.
    let cached: { state: S; revision: number; snapshotAt: number } | undefined = useCache || assumeNew ? cachedState<S>(store, streamId, decider) : undefined;
    const assumedEmpty = !cached && assumeNew;
    if (assumedEmpty) cached = { state: decider.initialState, revision: -1, snapshotAt: -1 };
    useCache = false;
    assumeNew = false;
    const { state, revision, snapshotAt } = cached ?? (await load<S, E>(store, streamId, decider as unknown as Decider<unknown, S, DomainEvent>));
    if (options.expectedRevision !== undefined && options.expectedRevision !== revision) {
      throw new PreconditionFailedError(streamId, options.expectedRevision, revision);
    }
    const events: E[] = [];
    let next = state;
    try {
      for (const commandOf of options.commands) {
        const decided = decider.decide(commandOf(next), next);
        if (decided.length === 0) continue;
        events.push(...decided);
        next = fold(decider.evolve, next, decided);
      }
    } catch (err) {
      // Refused on a state that was not read: decide again on the stream as it is before saying no.
      if (cached && err instanceof DomainError) {
        attempt--;
        continue;
      }
      throw err;
    }
    if (events.length === 0) {
      // Nothing to do on an empty state that was only assumed: answer the stream as read instead.
      if (assumedEmpty) {
        attempt--;
        continue;
      }
      return { events, state, revision, position: null };
    }
    assertEventShapes(decider, events);
    const expected: ExpectedRevision = revision === -1 ? 'no_stream' : revision;
    try {
      const metadata = metadataOf(options.context);
      const result = await store.append(
        streamId,
        events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })),
        expected,
      );
      await remember(store, decider, streamId, result.revision, result.position, next, snapshotAt);
      return { events, state: next, revision: result.revision, position: result.position };
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err;
      if (options.expectedRevision !== undefined) {
        throw new PreconditionFailedError(streamId, options.expectedRevision, typeof err.actual === 'number' ? err.actual : -1);
      }
      // The stream existed after all: read it and decide again (no pause, not an attempt: nobody raced us).
      if (assumedEmpty) {
        attempt--;
        continue;
      }
      if (attempt >= maxAttempts) throw new ConflictError(streamId);
      await pause(attempt);
    }
  }
}

/**
 * A decider that produces an event its own schema rejects is a bug: fail loudly, append nothing.
 * The one check every appended event passes; an event the decider already checked when building
 * it against the same schema (markChecked) is not checked twice.
 */
function assertEventShapes<E extends DomainEvent>(decider: Decider<unknown, unknown, E>, events: E[]) {
  for (const event of events) {
    const schema = decider.eventSchemas[event.type as E['type']];
    if (!schema) throw new Error(`event ${event.type} has no schema`);
    if (wasChecked(event, schema)) continue;
    const parsed = schema.safeParse(event.data);
    if (!parsed.success) throw new Error(`event ${event.type} does not match its schema: ${parsed.error.message}`);
  }
}

/** Handles `command` on `streamId` at the context's time (`at`), the way most contexts write. */
export function handleAtContextTime<C, S, E extends DomainEvent>(
  store: EventStore,
  context: CommandContext,
  streamId: string,
  decider: Decider<C, S, E>,
  command: WithoutAt<C>,
  expectedRevision?: number,
): Promise<HandleResult<S, E>> {
  return handleCommand(store, { streamId, decider, command: { ...command, at: context.now.toISOString() } as C, context, expectedRevision });
}
