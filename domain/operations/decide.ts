import type { OperationEvent } from './events.js';
import type { OperationState } from './state.js';

export type OperationCommand =
  | { type: 'RequestRebuild'; name: string; requestId: string; at: string }
  | { type: 'RecordRebuild'; name: string; requestId: string; events: number; durationMs: number; at: string }
  | { type: 'RecordRebuildFailure'; name: string; requestId: string; reason: string; at: string };

export function decideOperation(command: OperationCommand, state: OperationState): OperationEvent[] {
  switch (command.type) {
    case 'RequestRebuild':
      return [{ type: 'ProjectionRebuildRequested', data: { name: command.name, requestId: command.requestId, requestedAt: command.at } }];
    case 'RecordRebuild':
      // A request answered already (a second projector process, a redelivery) is not answered twice.
      if (!state.open.includes(command.requestId)) return [];
      return [{ type: 'ProjectionRebuilt', data: { name: command.name, requestId: command.requestId, events: command.events, durationMs: command.durationMs, at: command.at } }];
    case 'RecordRebuildFailure':
      if (!state.open.includes(command.requestId)) return [];
      return [{ type: 'ProjectionRebuildFailed', data: { name: command.name, requestId: command.requestId, reason: command.reason, at: command.at } }];
  }
}
