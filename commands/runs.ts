import { flowDecider, flowNotFound, flowStreamId, isVisibleTo, nodeNotFound, type FlowScope } from '../domain/flows/index.js';
import { runDecider, runStreamId, type OverrideConfig, type RunCommand, type RunMode } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';
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
}

export async function requestRun(store: EventStore, context: CommandContext, processId: string, request: RunRequest) {
  const flow = (await loadState(store, flowStreamId(request.flowId), flowDecider)).state;
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
      at: context.now.toISOString(),
    },
    context,
  });
}

type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

/** Every other run command (the worker's and stop): time from the context. */
export function executeRunCommand(store: EventStore, context: CommandContext, processId: string, command: WithoutAt<Exclude<RunCommand, { type: 'RequestRun' }>>) {
  return handleCommand(store, {
    streamId: runStreamId(processId),
    decider: runDecider,
    command: { ...command, at: context.now.toISOString() } as RunCommand,
    context,
  });
}

export function requestStop(store: EventStore, context: CommandContext, processId: string, by: string | null) {
  return executeRunCommand(store, context, processId, { type: 'RequestStop', by });
}

/** The run's state from its stream (the worker's view; never the read model). */
export async function loadRun(store: EventStore, processId: string) {
  // Through the handler's folded-state cache: the executor reads its run after every step.
  return (await loadState(store, runStreamId(processId), runDecider)).state;
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
