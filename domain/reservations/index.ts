import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';

const reservationData = z.object({ key: z.string(), ownerId: z.string() });

/**
 * Cross-aggregate uniqueness (one account per email, one name per collection): a reservation
 * stream per unique key, so two concurrent claims conflict on the same stream, never on a read model.
 */
export type ReservationEvent =
  | { type: 'ReservationClaimed'; data: { key: string; ownerId: string } }
  | { type: 'ReservationReleased'; data: { key: string; ownerId: string } };

export type ReservationCommand =
  | { type: 'Claim'; key: string; ownerId: string }
  | { type: 'Release'; key: string; ownerId: string };

export interface ReservationState {
  ownerId: string | null;
}

export const reservationDecider: Decider<ReservationCommand, ReservationState, ReservationEvent> = {
  initialState: { ownerId: null },
  eventSchemas: { ReservationClaimed: reservationData, ReservationReleased: reservationData },
  evolve(state, event) {
    switch (event.type) {
      case 'ReservationClaimed':
        return { ownerId: event.data.ownerId };
      case 'ReservationReleased':
        return { ownerId: null };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'Claim':
        if (state.ownerId === command.ownerId) return [];
        if (state.ownerId !== null) throw new DomainError('ALREADY_TAKEN', `${command.key} is already taken`, 'conflict');
        return [{ type: 'ReservationClaimed', data: { key: command.key, ownerId: command.ownerId } }];
      case 'Release':
        if (state.ownerId !== command.ownerId) return [];
        return [{ type: 'ReservationReleased', data: { key: command.key, ownerId: command.ownerId } }];
    }
  },
};
