import { decider, type Decider } from '../shared/decider.js';
import { decideReservation, type ReservationCommand } from './decide.js';
import { reservationEventSchemas, type ReservationEvent } from './events.js';
import { evolveReservation, initialReservationState, type ReservationState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

/**
 * Cross-aggregate uniqueness (one account per email, one name per collection): a reservation
 * stream per unique key, so two concurrent claims conflict on the same stream, never on a read model.
 */
export const reservationDecider: Decider<ReservationCommand, ReservationState, ReservationEvent> = decider(initialReservationState, evolveReservation, decideReservation, reservationEventSchemas);
