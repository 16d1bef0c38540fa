import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, nodeNotFound, type FlowScope, type FlowState } from '../domain/flows/index.js';
import { isFinished, runDecider, runStreamId, type OverrideConfig, type RunCommand, type RunMode, type RunReplay, type RunState } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import { sleep } from '../lib/sleep.js';
import type { EventStore, PendingStream } from '../ports/event-store.js';
import type { LlmProviderId } from '../ports/llm.js';
import type { RunExecutor, RunSettings } from '../ports/runs.js';
import { cachedState, flushPending, handleCommand, handleCommands, loadState, pendingStream, type CommandContext } from './handle.js';
import { assertWithinBudget } from './orgs-budget.js';
import { claimReservation, releaseReservation, reservationStreamId } from './reservations.js';

/**
 * The run's write side. Requesting a run folds the flow from its own stream (the write side may read
 * the log; the read model could lag behind an edit made a moment ago) and snapshots its definition
 * into RunRequested, so later edits never change a run.
 */
export interface RunRequest {
  flowId: string;
  mode: RunMode;
  nodeId?: string | null;
  inputs: Record<string, unknown>;
  async: boolean;
  requestedBy: string | null;
  /** `api`, `trigger`, … */
  source: string;
  saveToHistory?: boolean;
  overrideConfig?: OverrideConfig | null;
  idempotencyKey?: string | null;
  /** The caller's tenant; null for public triggers (the key already proved access). */
  scope: FlowScope | null;
  /** A synchronous run executed by the caller's process: claimed in the same decision. */
  claimBy?: string;
  /** A replay of an earlier run (domain/runs/replay.ts). */
  replay?: RunReplay;
}

/**
 * `pending`: a synchronous run this process executes itself — its RunRequested (and RunStarted)
 * are held there instead of appended; the executor appends them with its first durable step
 * (PendingStream).
 */
export async function requestRun(store: EventStore, context: CommandContext, processId: string, request: RunRequest, folded?: FlowState, pending?: PendingStream<RunState>) {
  // `folded`: the flow as the caller folded it from its stream in this same request (startRun).
  const flow = folded ?? (await loadState(store, flowStreamId(request.flowId), flowDecider)).state;
  if (!flow.exists || flow.deleted || (request.scope && !isVisibleTo(flow, request.scope))) throw flowNotFound();
  if (request.mode === 'node' && !flow.nodes.some((n) => n.id === request.nodeId)) throw nodeNotFound(request.nodeId ?? '');
  return handleCommand(store, {
    streamId: runStreamId(processId),
    decider: runDecider,
    command: {
      type: 'RequestRun',
      processId,
      flowId: request.flowId,
      flowVersion: flow.version,
      ownerId: flow.ownerId,
      orgId: flow.orgId,
      workspaceId: flow.workspaceId,
      mode: request.mode,
      nodeId: request.mode === 'node' ? request.nodeId : null,
      nodes: flow.nodes,
      edges: flow.edges,
      inputs: request.inputs,
      async: request.async,
      requestedBy: request.requestedBy,
      source: request.source,
      saveToHistory: request.saveToHistory ?? false,
      overrideConfig: request.overrideConfig ?? null,
      idempotencyKey: request.idempotencyKey ?? null,
      ...(request.claimBy !== undefined && { claimBy: request.claimBy }),
      ...(request.replay && { replay: request.replay }),
      at: context.now.toISOString(),
    },
    context,
    // A processId the caller just made: no read of a stream that cannot exist yet.
    newStream: true,
    pending,
  });
}

type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

type OtherRunCommand = WithoutAt<Exclude<RunCommand, { type: 'RequestRun' }>>;

/** Every other run command (the worker's and stop): time from the context. `fromCache`, `pending`: see HandleOptions (the executor). */
export function executeRunCommand(store: EventStore, context: CommandContext, processId: string, command: OtherRunCommand, options: RunCommandOptions = {}) {
  return handleCommand(store, {
    streamId: runStreamId(processId),
    decider: runDecider,
    command: { ...command, at: context.now.toISOString() } as RunCommand,
    context,
    fromCache: options.fromCache,
    pending: options.pending,
  });
}

export interface RunCommandOptions {
  fromCache?: boolean;
  pending?: PendingStream<RunState>;
}

/**
 * Several run commands decided in turn and appended together (a node's start and its end when it
 * finished within the tick it started in); each command carries its own `at`.
 */
export function executeRunCommands(store: EventStore, context: CommandContext, processId: string, commands: ReadonlyArray<(state: RunState) => Exclude<RunCommand, { type: 'RequestRun' }>>, options: RunCommandOptions = {}) {
  return handleCommands(store, { streamId: runStreamId(processId), decider: runDecider, commands, context, fromCache: options.fromCache, pending: options.pending });
}

/** Appends what a pending run holds (see PendingStream); nothing when it was appended already. */
export function flushPendingRun(store: EventStore, pending: PendingStream<RunState>) {
  return flushPending(store, runDecider, pending);
}

export function requestStop(store: EventStore, context: CommandContext, processId: string, by: string | null) {
  return executeRunCommand(store, context, processId, { type: 'RequestStop', by });
}

/** The run's state from its stream (the worker's view; never the read model). */
export async function loadRun(store: EventStore, processId: string) {
  // Through the handler's folded-state cache: the executor reads its run after every step.
  return (await loadState(store, runStreamId(processId), runDecider)).state;
}

/** The run as this process last folded it, without reading its stream (undefined when not cached). */
export function cachedRun(store: EventStore, processId: string): RunState | undefined {
  return cachedState(store, runStreamId(processId), runDecider)?.state;
}

/** Where the run's stream stands as this process last saw it: its revision, and the global position when known. */
export function cachedRunPosition(store: EventStore, processId: string): { streamId: string; revision: number; position: number | null } | undefined {
  const cached = cachedState(store, runStreamId(processId), runDecider);
  return cached ? { streamId: runStreamId(processId), revision: cached.revision, position: cached.position } : undefined;
}

// ---------------------------------------------------------------- Idempotency-Key

/** A repeated Idempotency-Key answers the first run for this long; after it the key starts a new run. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
const IDEMPOTENCY_SCOPE = 'idempotency';

export type IdempotencyClaim = { owned: true } | { owned: false; processId: string };

/**
 * Claims `${userId}:${key}` for `processId` through a reservation stream, so of two identical
 * requests arriving together exactly one wins (the loser's append conflicts on the same stream),
 * which a read-model lookup cannot promise. The claim's time is the ReservationClaimed event's
 * `occurredAt`: a claim older than the window is released (naming its holder, so of two requests
 * racing to replace it only one release lands) and claimed anew.
 */
export async function claimIdempotencyKey(store: EventStore, context: CommandContext, userId: string, key: string, processId: string, windowMs = IDEMPOTENCY_WINDOW_MS): Promise<IdempotencyClaim> {
  const reservationKey = `${userId}:${key}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await claimReservation(store, context, IDEMPOTENCY_SCOPE, reservationKey, processId);
      return { owned: true };
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'ALREADY_TAKEN')) throw err;
    }
    const holder = await idempotencyHolder(store, userId, key);
    if (!holder) continue; // released meanwhile: claim again
    if (context.now.getTime() - Date.parse(holder.claimedAt) < windowMs) return { owned: false, processId: holder.processId };
    await releaseReservation(store, context, IDEMPOTENCY_SCOPE, reservationKey, holder.processId);
  }
  throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'another request with this Idempotency-Key is in progress; retry later', 'conflict');
}

/** Who holds the key now (the last event of its reservation stream), or null when it is free. */
export async function idempotencyHolder(store: EventStore, userId: string, key: string): Promise<{ processId: string; claimedAt: string } | null> {
  const [last] = await store.readStream(reservationStreamId(IDEMPOTENCY_SCOPE, `${userId}:${key}`), { direction: 'backwards', maxCount: 1 });
  if (!last || last.type !== 'ReservationClaimed') return null;
  return { processId: (last.data as { ownerId: string }).ownerId, claimedAt: last.metadata.occurredAt };
}

/** Frees a key whose request failed before its run existed, so a retry with the same key can run. */
export function releaseIdempotencyKey(store: EventStore, context: CommandContext, userId: string, key: string, processId: string) {
  return releaseReservation(store, context, IDEMPOTENCY_SCOPE, `${userId}:${key}`, processId);
}

// ---------------------------------------------------------------- starting a run for a request

export interface RunStartPorts {
  eventStore: EventStore;
  /** Executes synchronous runs in this process. */
  runs: RunExecutor;
  newId(): string;
  settings: Pick<RunSettings, 'READ_YOUR_WRITES_TIMEOUT_MS' | 'NODE_TIMEOUT_MS'>;
}

export interface StartedRun {
  processId: string;
  /** The final state for a synchronous run, null for an async one (or a repeated request). */
  state: RunState | null;
  /** The run of an earlier request with the same Idempotency-Key, as it stands. */
  repeated: RunState | null;
  /** What the caller waits for before answering (read-your-writes); null for a repeated request. */
  position: number | null;
}

/**
 * Starts a run for a request. Synchronous runs are executed by this process (claimed in the
 * request's own decision) and awaited; async ones go to the run worker through the bus.
 *
 * Idempotency-Key (per user, 24 h; public triggers have no user and no idempotency): the key is
 * claimed for the new processId in a reservation stream before anything runs, so of two identical
 * requests arriving together one runs and the other waits for that run — until it exists (async)
 * or has finished (sync, bounded by NODE_TIMEOUT_MS; after that it answers the run as it stands) —
 * and answers it. A request that fails before its run exists releases the key.
 */
export async function startRun(
  ports: RunStartPorts,
  context: CommandContext,
  request: Omit<RunRequest, 'idempotencyKey' | 'claimBy'>,
  caller: { userId: string | null; idempotencyKey: string | null },
  folded?: FlowState,
): Promise<StartedRun> {
  const { eventStore } = ports;
  const { userId } = caller;
  const key = userId ? caller.idempotencyKey : null;
  const processId = ports.newId();
  // The flow folded once from its stream for the whole request (the budget check and the run's
  // snapshot); `folded` when the caller folded it in this same request already (the route's checks).
  const flow = folded ?? (await loadState(eventStore, flowStreamId(request.flowId), flowDecider)).state;
  await assertRunWithinBudget(eventStore, context, request, flow);
  if (key && userId) {
    let owned = false;
    // Two rounds: when the first request failed before creating its run, its key is free again.
    for (let round = 0; round < 2 && !owned; round++) {
      const claim = await claimIdempotencyKey(eventStore, context, userId, key, processId);
      if (claim.owned) owned = true;
      else {
        const earlier = await awaitEarlierRun(ports, userId, key, claim.processId, !request.async);
        if (earlier) return { processId: claim.processId, state: null, repeated: earlier, position: null };
      }
    }
    if (!owned) throw new DomainError('IDEMPOTENCY_KEY_IN_USE', 'another request with this Idempotency-Key is in progress; retry later', 'conflict');
  }
  // A synchronous run is executed here: its events are held while its nodes run only in this
  // process and appended together (the executor appends before anything reaches outside). Not with
  // an Idempotency-Key: a request repeating the key waits for the run to appear in the log.
  const pending = request.async || key ? undefined : pendingStream(runStreamId(processId), runDecider);
  let result;
  try {
    result = await requestRun(eventStore, context, processId, {
      ...request,
      idempotencyKey: key,
      ...(request.async ? {} : { claimBy: ports.runs.localWorkerId }),
    }, key ? undefined : flow, pending); // after waiting on a key, fold the flow again
  } catch (err) {
    if (key && userId) await releaseIdempotencyKey(eventStore, context, userId, key, processId).catch(() => undefined);
    throw err;
  }
  if (request.async) return { processId, state: null, repeated: null, position: result.position };
  const state = await ports.runs.execute(processId, ports.runs.localWorkerId, pending);
  // The executor appended what it held when it ended; an executor that did not, is made up for here.
  if (pending) await flushPendingRun(eventStore, pending);
  return { processId, state, repeated: null, position: (await runPositionAt(eventStore, processId, state.version)) ?? result.position };
}

/**
 * The global position of the run's event at `revision`: from the handler's cache when this process
 * appended or read that event last (the executor's own last append, the common case), else read.
 */
async function runPositionAt(store: EventStore, processId: string, revision: number): Promise<number | null> {
  const known = cachedState(store, runStreamId(processId), runDecider);
  if (known && known.revision === revision && known.position !== null) return known.position;
  const [last] = await store.readStream(runStreamId(processId), { fromRevision: Math.max(0, revision), maxCount: 1 });
  return last?.position ?? null;
}

/**
 * The run of the request that holds the key, from the log (the read model may lag): once it exists
 * (and, for a synchronous request, once it finished or the wait ran out). Null when it never
 * appeared because its request gave the key up, or did not appear within the read-your-writes bound.
 */
async function awaitEarlierRun(ports: RunStartPorts, userId: string, key: string, processId: string, sync: boolean): Promise<RunState | null> {
  const started = Date.now();
  const appearBy = started + Math.max(ports.settings.READ_YOUR_WRITES_TIMEOUT_MS, 1000);
  const finishBy = started + ports.settings.NODE_TIMEOUT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    const run = await loadRun(ports.eventStore, processId);
    if (run.exists) {
      if (!sync || isFinished(run.status) || Date.now() >= finishBy) return run;
    } else {
      if (Date.now() >= appearBy) return null;
      const holder = await idempotencyHolder(ports.eventStore, userId, key);
      if (holder?.processId !== processId) return null;
    }
    await sleep(pause);
  }
}

/**
 * An organization over its budget gets BUDGET_EXCEEDED before a run that would call a paid
 * provider starts, rather than a run that fails at its first llm node. The offline provider stays
 * free. The flow is folded from its stream, like requestRun does.
 */
async function assertRunWithinBudget(store: EventStore, context: CommandContext, request: Pick<RunRequest, 'flowId' | 'mode' | 'nodeId'>, flow: FlowState) {
  if (!flow.exists || flow.deleted || !flow.orgId) return;
  const nodes = request.mode === 'node' ? flow.nodes.filter((n) => n.id === request.nodeId) : flow.nodes;
  const paid = nodes.map((n) => n.data.llm).find((p): p is string => typeof p === 'string' && p !== 'offline');
  if (paid) await assertWithinBudget({ eventStore: store, clock: { now: () => context.now } }, { orgId: flow.orgId }, paid as LlmProviderId);
}
