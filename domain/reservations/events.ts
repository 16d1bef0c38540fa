import { z } from 'zod';

const reservationData = z.object({ key: z.string(), ownerId: z.string() });

export const reservationEventSchemas = { ReservationClaimed: reservationData, ReservationReleased: reservationData };

export type ReservationEvent =
  | { type: 'ReservationClaimed'; data: { key: string; ownerId: string } }
  | { type: 'ReservationReleased'; data: { key: string; ownerId: string } };
