import { createHash } from 'node:crypto';
import { reservationDecider } from '../domain/reservations/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

/** The key is hashed so that an email never appears in a stream name. */
export function reservationStreamId(scope: string, key: string): string {
  const digest = createHash('sha256').update(`${scope}\u0000${key}`).digest('hex').slice(0, 40);
  return `reservation-${scope}.${digest}`;
}

export const claimReservation = (store: EventStore, context: CommandContext, scope: string, key: string, ownerId: string) =>
  reserve(store, context, 'Claim', scope, key, ownerId);

export const releaseReservation = (store: EventStore, context: CommandContext, scope: string, key: string, ownerId: string) =>
  reserve(store, context, 'Release', scope, key, ownerId);

async function reserve(store: EventStore, context: CommandContext, type: 'Claim' | 'Release', scope: string, key: string, ownerId: string): Promise<void> {
  await handleCommand(store, { streamId: reservationStreamId(scope, key), decider: reservationDecider, command: { type, key: `${scope}:${hashForEvent(key)}`, ownerId }, context });
}

function hashForEvent(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}
