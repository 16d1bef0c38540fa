import type { OperationEvent } from './events.js';

export interface OperationState {
  /** Requests not yet answered by a ProjectionRebuilt or ProjectionRebuildFailed. */
  open: string[];
}

export const initialOperationState: OperationState = { open: [] };

export function evolveOperation(state: OperationState, event: OperationEvent): OperationState {
  switch (event.type) {
    case 'ProjectionRebuildRequested':
      return { open: [...state.open, event.data.requestId] };
    case 'ProjectionRebuilt':
    case 'ProjectionRebuildFailed':
      return { open: state.open.filter((id) => id !== event.data.requestId) };
    default:
      return state;
  }
}
