import { z } from 'zod';
import type { Decider } from '../shared/decider.js';

/**
 * Operational commands on the platform itself, recorded like everything else: a projection rebuild
 * is requested by an API process and carried out by whichever process runs that projector, so the
 * request travels as an event (stream `projection-<name>`) and the audit log shows who asked.
 */
export const operationEventSchemas = {
  ProjectionRebuildRequested: z.object({ name: z.string(), requestId: z.string(), requestedAt: z.string() }),
  ProjectionRebuilt: z.object({ name: z.string(), requestId: z.string(), events: z.number().int(), durationMs: z.number().int(), at: z.string() }),
  ProjectionRebuildFailed: z.object({ name: z.string(), requestId: z.string(), reason: z.string(), at: z.string() }),
};

export type OperationEvent =
  | { type: 'ProjectionRebuildRequested'; data: z.infer<typeof operationEventSchemas.ProjectionRebuildRequested> }
  | { type: 'ProjectionRebuilt'; data: z.infer<typeof operationEventSchemas.ProjectionRebuilt> }
  | { type: 'ProjectionRebuildFailed'; data: z.infer<typeof operationEventSchemas.ProjectionRebuildFailed> };

export type OperationCommand =
  | { type: 'RequestRebuild'; name: string; requestId: string; at: string }
  | { type: 'RecordRebuild'; name: string; requestId: string; events: number; durationMs: number; at: string }
  | { type: 'RecordRebuildFailure'; name: string; requestId: string; reason: string; at: string };

export interface OperationState {
  /** Requests not yet answered by a ProjectionRebuilt or ProjectionRebuildFailed. */
  open: string[];
}

export const projectionStreamId = (name: string) => `projection-${name}`;

export const operationDecider: Decider<OperationCommand, OperationState, OperationEvent> = {
  initialState: { open: [] },
  eventSchemas: operationEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'ProjectionRebuildRequested':
        return { open: [...state.open, event.data.requestId] };
      case 'ProjectionRebuilt':
      case 'ProjectionRebuildFailed':
        return { open: state.open.filter((id) => id !== event.data.requestId) };
      default:
        return state;
    }
  },
  decide(command, state) {
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
  },
};
