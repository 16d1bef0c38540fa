import type { Decider } from '../shared/decider.js';
import { slotEventSchemas, type SlotClaimRef, type SlotEvent } from './events.js';
import { PersistentMap } from './pmap.js';

/**
 * A collection's document count, folded from `docslots-<collectionId>` (see events.ts). Claims are
 * appended without an expected revision, so concurrent inserters never conflict; the fold decides,
 * in stream order, which claims fit: `base - legacyRemoved + count < max`. A writer appends its
 * claim, folds the stream past it, and reads the outcome with `claimHolds`.
 *
 * A claim is per document id and life (`after`): a repeated claim for the same life (two inserters
 * of one id, a retry) is absorbed, a claim for a later life takes the place of the earlier one
 * (whose release, when it comes, is then ignored). A process that stops between its claim and its
 * document's first event leaves a claim nobody will write: claims older than the TTL are checked by
 * a reconciliation (reconcileSlots in commands/documents.ts), which fences the unwritten ones on their document
 * stream and gives their slots back with DocumentSlotsReconciled.
 */
export interface SlotState {
  /** Document id -> the document stream revision the claim was made after. */
  claims: PersistentMap<number>;
  count: number;
  /** Documents of the collection stream's count removed since. */
  legacyRemoved: number;
  /** Revision of the last event folded (-1: none). */
  revision: number;
  /** Claims that took a slot and no reconciliation has checked yet, by document id. */
  unchecked: PersistentMap<UncheckedClaim>;
}

export interface UncheckedClaim {
  after: number;
  /** When claimed (epoch ms; 0 for claims made before claims were dated). */
  at: number;
  /** The claim's revision in the slot stream. */
  seq: number;
}

export const initialSlotState: SlotState = { claims: PersistentMap.empty(), count: 0, legacyRemoved: 0, revision: -1, unchecked: PersistentMap.empty() };

export function evolveSlots(state: SlotState, event: SlotEvent): SlotState {
  const revision = state.revision + 1;
  if (event.type === 'DocumentSlotClaimed') {
    const { documentId, after, base, max } = event.data;
    const held = state.claims.get(documentId);
    const unchecked = (s: SlotState) => s.unchecked.set(documentId, { after, at: event.data.at ?? 0, seq: revision });
    if (held !== undefined) {
      if (held >= after) return { ...state, revision };
      return { ...state, claims: state.claims.set(documentId, after), unchecked: unchecked(state), revision };
    }
    if (base - state.legacyRemoved + state.count >= max) return { ...state, revision }; // refused: the collection is full
    return { ...state, claims: state.claims.set(documentId, after), count: state.count + 1, unchecked: unchecked(state), revision };
  }
  if (event.type === 'DocumentSlotReleased') {
    const { documentId, removedAt, legacyLife } = event.data;
    if (legacyLife) return { ...state, legacyRemoved: state.legacyRemoved + 1, revision };
    const held = state.claims.get(documentId);
    if (held === undefined || held >= removedAt) return { ...state, revision };
    return { ...state, claims: state.claims.delete(documentId), count: state.count - 1, unchecked: state.unchecked.delete(documentId), revision };
  }
  if (event.type === 'DocumentSlotsReconciled') {
    let { claims, count, unchecked } = state;
    // A lapsed claim is fenced on its document stream, so that life can never be written: its slot
    // is given back whenever the event comes, once (a claim of a later life is a different claim).
    for (const { documentId, after } of event.data.lapsed) {
      if (claims.get(documentId) !== after) continue;
      claims = claims.delete(documentId);
      count--;
    }
    for (const [documentId, claim] of unchecked.entries()) if (claim.seq <= event.data.through) unchecked = unchecked.delete(documentId);
    return { ...state, claims, count, unchecked, revision };
  }
  return { ...state, revision };
}

/** True when a claim for `documentId` made after stream revision `after` holds a slot. */
export function claimHolds(state: SlotState, documentId: string, after: number): boolean {
  const held = state.claims.get(documentId);
  return held !== undefined && held >= after;
}

/**
 * The unchecked claims a reconciliation at `now` checks: the oldest, in slot-stream order, up to the
 * first one younger than the TTL (claims are dated by their writers' clocks, so stream order is the
 * order kept), at most `max`; `through` is the last one's slot revision (the next run starts after it).
 */
export function dueClaims(state: SlotState, now: number, ttlMs: number, max: number): { claims: SlotClaimRef[]; through: number } {
  const pending = [...state.unchecked.entries()].sort((a, b) => a[1].seq - b[1].seq);
  const claims: SlotClaimRef[] = [];
  let through = -1;
  for (const [documentId, claim] of pending) {
    if (claims.length >= max || claim.at > now - ttlMs) break;
    claims.push({ documentId, after: claim.after });
    through = claim.seq;
  }
  return { claims, through };
}

/** Folded through the command layer's cache; nothing is decided on it (claims are appended as they come). */
export const slotDecider: Decider<never, SlotState, SlotEvent> = {
  initialState: initialSlotState,
  eventSchemas: slotEventSchemas,
  evolve: evolveSlots,
  decide: () => [],
};
