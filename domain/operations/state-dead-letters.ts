import type { DeadLetterEvent, DeadLetterKind, FailedEvent } from './events-dead-letters.js';

export interface DeadLetterState {
  exists: boolean;
  kind: DeadLetterKind;
  consumer: string | null;
  /** The failed event; null for an undecodable message (there is no event to deliver). */
  event: FailedEvent | null;
  /** `open` until a retry succeeds or an operator discards it; a new dead-lettering of the same event opens it again. */
  status: 'open' | 'resolved' | 'discarded';
  /** Every failed handler call: the rounds of delivery plus failed retries. */
  attempts: number;
  lastError: string | null;
  /** Retry requests not yet answered by DeadLetterResolved or DeadLetterRetryFailed. */
  pending: string[];
}

export const initialState: DeadLetterState = { exists: false, kind: 'event', consumer: null, event: null, status: 'open', attempts: 0, lastError: null, pending: [] };

export function evolve(state: DeadLetterState, event: DeadLetterEvent): DeadLetterState {
  switch (event.type) {
    case 'EventDeadLettered':
      return { ...state, exists: true, kind: 'event', consumer: event.data.consumer, event: event.data.event, status: 'open', attempts: state.attempts + event.data.attempts, lastError: event.data.error };
    case 'UndecodableMessageDeadLettered':
      // Decoding never succeeds on another attempt: one call, the letter's one failure.
      return { ...state, exists: true, kind: 'undecodable', consumer: event.data.consumer, event: null, status: 'open', attempts: state.attempts + 1, lastError: event.data.error };
    case 'DeadLetterRetryRequested':
      return { ...state, pending: [...state.pending, event.data.requestId] };
    case 'DeadLetterResolved':
      return { ...state, status: 'resolved', pending: state.pending.filter((id) => id !== event.data.requestId) };
    case 'DeadLetterRetryFailed':
      return { ...state, attempts: state.attempts + 1, lastError: event.data.error, pending: state.pending.filter((id) => id !== event.data.requestId) };
    case 'DeadLetterDiscarded':
      // Retries still queued are dropped with it: a worker that picks one up later delivers nothing.
      return { ...state, status: 'discarded', pending: [] };
    default:
      return state;
  }
}
