import { workerDecider, workerStreamId, type WorkerCommand } from '../domain/workers/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

/** Every worker-presence write: time from the context. */
export function executeWorkerCommand(store: EventStore, context: CommandContext, workerId: string, command: WithoutAt<WorkerCommand>) {
  return handleCommand(store, {
    streamId: workerStreamId(workerId),
    decider: workerDecider,
    command: { ...command, at: context.now.toISOString() } as WorkerCommand,
    context,
  });
}
