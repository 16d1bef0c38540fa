import { operationDecider, projectionStreamId, type OperationEvent } from '../domain/operations/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { sleep } from '../lib/sleep.js';
import type { EventStore } from '../ports/event-store.js';
import type { ProjectionRebuilder } from '../ports/projections.js';
import { handleAtContextTime, handleCommand, type CommandContext } from './handle.js';

export function requestProjectionRebuild(store: EventStore, context: CommandContext, name: string, requestId: string) {
  return handleAtContextTime(store, context, projectionStreamId(name), operationDecider, { type: 'RequestRebuild', name, requestId });
}

export function recordProjectionRebuild(
  store: EventStore,
  context: CommandContext,
  name: string,
  requestId: string,
  outcome: { events: number; durationMs: number } | { reason: string },
) {
  const at = context.now.toISOString();
  return handleCommand(store, {
    streamId: projectionStreamId(name),
    decider: operationDecider,
    command: 'reason' in outcome
      ? { type: 'RecordRebuildFailure', name, requestId, reason: outcome.reason, at }
      : { type: 'RecordRebuild', name, requestId, events: outcome.events, durationMs: outcome.durationMs, at },
    context,
  });
}

export interface RebuildPorts {
  eventStore: EventStore;
  /** Only `has` is used here: the rebuild itself runs where the projectors run (operations-control.ts). */
  projections: Pick<ProjectionRebuilder, 'has'>;
  newId(): string;
}

export type RebuildAnswer =
  | { status: 'rebuilt'; events: number; durationMs: number }
  | { status: 'rebuilding'; requestId: string };

/**
 * Asks for a rebuild (an event, so whichever process runs the projector carries it out) and waits
 * up to `waitMs` for its outcome; a failed rebuild is REBUILD_FAILED, one still running answers
 * `rebuilding` with the request id.
 */
export async function rebuildProjection(ports: RebuildPorts, context: CommandContext, name: string, waitMs: number): Promise<RebuildAnswer> {
  if (!ports.projections.has(name)) throw new DomainError('PROJECTION_NOT_FOUND', 'projection not found', 'not_found');
  const requestId = ports.newId();
  const requested = await requestProjectionRebuild(ports.eventStore, context, name, requestId);
  const outcome = await waitForOutcome(ports.eventStore, name, requestId, requested.revision, waitMs);
  if (!outcome) return { status: 'rebuilding', requestId };
  if (outcome.type === 'ProjectionRebuildFailed') throw new DomainError('REBUILD_FAILED', outcome.data.reason, 'internal');
  return { status: 'rebuilt', events: outcome.data.events, durationMs: outcome.data.durationMs };
}

/**
 * Reads the projection's control stream (the log on purpose: the outcome is an event, not a read
 * model). A bounded wait on the wall clock: it measures waiting, not domain time.
 */
async function waitForOutcome(store: EventStore, name: string, requestId: string, fromRevision: number, waitMs: number) {
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    const events = (await store.readStream(projectionStreamId(name), { fromRevision: fromRevision + 1 })) as Array<RecordedEvent & OperationEvent>;
    const outcome = events.find((e) => e.type !== 'ProjectionRebuildRequested' && e.data.requestId === requestId);
    if (outcome && outcome.type !== 'ProjectionRebuildRequested') return outcome;
    await sleep(25);
  }
  return null;
}
