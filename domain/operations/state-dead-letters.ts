import type { DeadLetterEvent, FailedEvent } from './events-dead-letters.js';

export interface DeadLetterState {
  exists: boolean;
  consumer: string | null;
  event: FailedEvent | null;
  /** `open` until a retry succeeds; a new dead-lettering of the same event opens it again. */
  status: 'open' | 'resolved';
  /** Every failed handler call: the rounds of delivery plus failed retries. */
  attempts: number;
  lastError: string | null;
  /** Retry requests not yet answered by DeadLetterResolved or DeadLetterRetryFailed. */
  pending: string[];
}

export const initialState: DeadLetterState = { exists: false, consumer: null, event: null, status: 'open', attempts: 0, lastError: null, pending: [] };

export function evolve(state: DeadLetterState, event: DeadLetterEvent): DeadLetterState {
  switch (event.type) {
    case 'EventDeadLettered':
      return { ...state, exists: true, consumer: event.data.consumer, event: event.data.event, status: 'open', attempts: state.attempts + event.data.attempts, lastError: event.data.error };
    case 'DeadLetterRetryRequested':
      return { ...state, pending: [...state.pending, event.data.requestId] };
    case 'DeadLetterResolved':
      return { ...state, status: 'resolved', pending: state.pending.filter((id) => id !== event.data.requestId) };
    case 'DeadLetterRetryFailed':
      return { ...state, attempts: state.attempts + 1, lastError: event.data.error, pending: state.pending.filter((id) => id !== event.data.requestId) };
    default:
      return state;
  }
}
