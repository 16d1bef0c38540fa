import { randomUUID } from 'node:crypto';
import { heartbeatStreamId, workerDecider, workerStreamId, type WorkerCommand, type WorkerEvent } from '../domain/workers/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleCommand, loadState, metadataOf, type CommandContext, type WithoutAt } from './handle.js';

/** Every worker-presence write: time from the context. */
export async function executeWorkerCommand(store: EventStore, context: CommandContext, workerId: string, command: WithoutAt<WorkerCommand>) {
  const timed = { ...command, at: context.now.toISOString() } as WorkerCommand;
  if (timed.type === 'RecordHeartbeat') return recordHeartbeat(store, context, workerId, timed);
  return handleCommand(store, { streamId: workerStreamId(workerId), decider: workerDecider, command: timed, context });
}

/**
 * Decided on the presence stream (a worker that never started or has stopped does not beat), then
 * appended to `heartbeat-<id>` with no expected revision: beats of one process never race, and
 * that stream's older events are truncated by the store.
 */
async function recordHeartbeat(store: EventStore, context: CommandContext, workerId: string, command: WorkerCommand) {
  const { state, revision } = await loadState(store, workerStreamId(workerId), workerDecider);
  const events: WorkerEvent[] = workerDecider.decide(command, state);
  for (const e of events) workerDecider.eventSchemas[e.type].parse(e.data);
  const metadata = metadataOf(context);
  const result = await store.append(heartbeatStreamId(workerId), events.map((e) => ({ id: randomUUID(), type: e.type, data: e.data, metadata })), 'any');
  return { events, state, revision, position: result.position };
}
