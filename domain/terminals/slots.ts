import { z } from 'zod';
import { decider, DomainError, type Decider } from '../shared/decider.js';
import type { EventsOf } from '../shared/events.js';

/**
 * The live terminals of one user (`terminalslots-<userId>`): a terminal holds a slot from its
 * registration (or reconnection) until it disconnects or is found offline. The count is decided on
 * this one stream, so concurrent registrations cannot exceed REMOTE_MAX_TERMINALS_PER_USER: two of
 * them decided on the same revision conflict, and the retry sees the other's slot.
 */
export const terminalSlotEventSchemas = {
  TerminalSlotTaken: z.object({ terminalId: z.string(), at: z.string() }),
  /** `disconnected`: DELETE …/{tid}; `offline`: no heartbeat for REMOTE_TERMINAL_OFFLINE_AFTER, reclaimed by a registration at the limit. */
  TerminalSlotReleased: z.object({ terminalId: z.string(), reason: z.enum(['disconnected', 'offline']), at: z.string() }),
};

export type TerminalSlotEvent = EventsOf<typeof terminalSlotEventSchemas>;

export interface TerminalSlotsState {
  /** Slot holders in the order they took them; `since` is when (a stand-in for the first heartbeat). */
  held: ReadonlyArray<{ terminalId: string; since: string }>;
}

export type TerminalSlotCommand =
  /** `reclaim`: holders the command layer found offline; their slots are freed first, in the same append. */
  | { type: 'TakeTerminalSlot'; terminalId: string; limit: number; reclaim: string[]; at: string }
  | { type: 'ReleaseTerminalSlot'; terminalId: string; reason: 'disconnected' | 'offline'; at: string };

export const TERMINAL_SLOTS_CATEGORY = 'terminalslots';
export const terminalSlotsStreamId = (userId: string) => `${TERMINAL_SLOTS_CATEGORY}-${userId}`;

export const tooManyTerminals = (limit: number) =>
  new DomainError('TOO_MANY_TERMINALS', `a user has at most ${limit} live terminals; disconnect one (DELETE /remote/terminals/{id}) first`, 'conflict', { limit });

export function evolveTerminalSlots(state: TerminalSlotsState, event: TerminalSlotEvent): TerminalSlotsState {
  switch (event.type) {
    case 'TerminalSlotTaken':
      return { held: [...state.held.filter((h) => h.terminalId !== event.data.terminalId), { terminalId: event.data.terminalId, since: event.data.at }] };
    case 'TerminalSlotReleased':
      return { held: state.held.filter((h) => h.terminalId !== event.data.terminalId) };
    default:
      return state;
  }
}

export function decideTerminalSlots(command: TerminalSlotCommand, state: TerminalSlotsState): TerminalSlotEvent[] {
  const holds = (id: string) => state.held.some((h) => h.terminalId === id);
  if (command.type === 'ReleaseTerminalSlot') {
    return holds(command.terminalId) ? [{ type: 'TerminalSlotReleased', data: { terminalId: command.terminalId, reason: command.reason, at: command.at } }] : [];
  }
  if (holds(command.terminalId)) return [];
  const reclaimed = [...new Set(command.reclaim)].filter((id) => id !== command.terminalId && holds(id));
  if (state.held.length - reclaimed.length >= command.limit) throw tooManyTerminals(command.limit);
  return [
    ...reclaimed.map((terminalId) => ({ type: 'TerminalSlotReleased' as const, data: { terminalId, reason: 'offline' as const, at: command.at } })),
    { type: 'TerminalSlotTaken', data: { terminalId: command.terminalId, at: command.at } },
  ];
}

export const initialTerminalSlotsState: TerminalSlotsState = { held: [] };

/** Snapshotted: the stream gains two events per terminal ever registered, while its state stays small. */
export const terminalSlotsDecider: Decider<TerminalSlotCommand, TerminalSlotsState, TerminalSlotEvent> = {
  ...decider(initialTerminalSlotsState, evolveTerminalSlots, decideTerminalSlots, terminalSlotEventSchemas),
  stateVersion: 1,
};
