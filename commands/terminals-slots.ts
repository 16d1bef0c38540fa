import { DomainError } from '../domain/shared/decider.js';
import { terminalBeatStreamId, terminalSlotsDecider, terminalSlotsStreamId, terminalStreamId, terminalDecider, type TerminalSlotsState } from '../domain/terminals/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';

/** REMOTE_MAX_TERMINALS_PER_USER and REMOTE_TERMINAL_OFFLINE_AFTER, as the slot commands need them. */
export interface SlotPolicy {
  limit: number;
  offlineAfterSeconds: number;
}

/**
 * Holders whose last sign of life (the newest heartbeat, else when they took the slot) is older
 * than the offline threshold: a CLI that crashed never sends DELETE, and its slot must not be lost
 * for good. Read from the log (the beat streams), not from the terminals read model.
 */
async function offlineHolders(store: EventStore, state: TerminalSlotsState, now: Date, offlineAfterSeconds: number): Promise<string[]> {
  const offline: string[] = [];
  for (const holder of state.held) {
    const [beat] = await store.readStream(terminalBeatStreamId(holder.terminalId), { direction: 'backwards', maxCount: 1 });
    const beatAt = beat ? String((beat.data as { at: string }).at) : holder.since;
    const lastSeen = Math.max(Date.parse(holder.since), Date.parse(beatAt));
    if (now.getTime() - lastSeen >= offlineAfterSeconds * 1000) offline.push(holder.terminalId);
  }
  return offline;
}

/**
 * Takes a slot for `terminalId` (no-op when it holds one). At the limit, offline holders are
 * disconnected first (so their next heartbeat must take a slot again) and their slots freed in
 * the same append as the take; still at the limit, 409 TOO_MANY_TERMINALS.
 */
export async function takeTerminalSlot(store: EventStore, context: CommandContext, userId: string, terminalId: string, policy: SlotPolicy) {
  const streamId = terminalSlotsStreamId(userId);
  const { state } = await loadState(store, streamId, terminalSlotsDecider);
  let reclaim: string[] = [];
  if (state.held.length >= policy.limit && !state.held.some((h) => h.terminalId === terminalId)) {
    reclaim = await offlineHolders(store, state, context.now, policy.offlineAfterSeconds);
    for (const id of reclaim) {
      try {
        await handleAtContextTime(store, context, terminalStreamId(id), terminalDecider, { type: 'Disconnect', userId });
      } catch (err) {
        // A slot taken by a registration that crashed before recording its terminal: nothing to disconnect.
        if (!(err instanceof DomainError && err.code === 'TERMINAL_NOT_FOUND')) throw err;
      }
    }
  }
  return handleAtContextTime(store, context, streamId, terminalSlotsDecider, { type: 'TakeTerminalSlot', terminalId, limit: policy.limit, reclaim });
}

export function releaseTerminalSlot(store: EventStore, context: CommandContext, userId: string, terminalId: string) {
  return handleAtContextTime(store, context, terminalSlotsStreamId(userId), terminalSlotsDecider, { type: 'ReleaseTerminalSlot', terminalId, reason: 'disconnected' });
}
