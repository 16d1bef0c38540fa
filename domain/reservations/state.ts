import type { ReservationEvent } from './events.js';

export interface ReservationState {
  ownerId: string | null;
}

export const initialReservationState: ReservationState = { ownerId: null };

export function evolveReservation(state: ReservationState, event: ReservationEvent): ReservationState {
  switch (event.type) {
    case 'ReservationClaimed':
      return { ownerId: event.data.ownerId };
    case 'ReservationReleased':
      return { ownerId: null };
    default:
      return state;
  }
}
