import { DomainError } from '../shared/decider.js';
import type { ReservationEvent } from './events.js';
import type { ReservationState } from './state.js';

export type ReservationCommand =
  | { type: 'Claim'; key: string; ownerId: string }
  | { type: 'Release'; key: string; ownerId: string };

export function decideReservation(command: ReservationCommand, state: ReservationState): ReservationEvent[] {
  switch (command.type) {
    case 'Claim':
      if (state.ownerId === command.ownerId) return [];
      if (state.ownerId !== null) throw new DomainError('ALREADY_TAKEN', `${command.key} is already taken`, 'conflict');
      return [{ type: 'ReservationClaimed', data: { key: command.key, ownerId: command.ownerId } }];
    case 'Release':
      if (state.ownerId !== command.ownerId) return [];
      return [{ type: 'ReservationReleased', data: { key: command.key, ownerId: command.ownerId } }];
  }
}
