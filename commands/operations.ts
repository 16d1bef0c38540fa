import { operationDecider, projectionStreamId } from '../domain/operations/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

export function requestProjectionRebuild(store: EventStore, context: CommandContext, name: string, requestId: string) {
  return handleCommand(store, {
    streamId: projectionStreamId(name),
    decider: operationDecider,
    command: { type: 'RequestRebuild', name, requestId, at: context.now.toISOString() },
    context,
  });
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
