import type { Decider } from '../shared/decider.js';
import { slotEventSchemas, type SlotEvent } from './events.js';
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
 * document's first event leaves the slot claimed until that id is inserted (DESIGN departure noted
 * in the README: the count can only err towards "fuller").
 */
export interface SlotState {
  /** Document id -> the document stream revision the claim was made after. */
  claims: PersistentMap<number>;
  count: number;
  /** Documents of the collection stream's count removed since. */
  legacyRemoved: number;
}

export const initialSlotState: SlotState = { claims: PersistentMap.empty(), count: 0, legacyRemoved: 0 };

export function evolveSlots(state: SlotState, event: SlotEvent): SlotState {
  if (event.type === 'DocumentSlotClaimed') {
    const { documentId, after, base, max } = event.data;
    const held = state.claims.get(documentId);
    if (held !== undefined) return held >= after ? state : { ...state, claims: state.claims.set(documentId, after) };
    if (base - state.legacyRemoved + state.count >= max) return state; // refused: the collection is full
    return { ...state, claims: state.claims.set(documentId, after), count: state.count + 1 };
  }
  if (event.type === 'DocumentSlotReleased') {
    const { documentId, removedAt, legacyLife } = event.data;
    if (legacyLife) return { ...state, legacyRemoved: state.legacyRemoved + 1 };
    const held = state.claims.get(documentId);
    if (held === undefined || held >= removedAt) return state;
    return { ...state, claims: state.claims.delete(documentId), count: state.count - 1 };
  }
  return state;
}

/** True when a claim for `documentId` made after stream revision `after` holds a slot. */
export function claimHolds(state: SlotState, documentId: string, after: number): boolean {
  const held = state.claims.get(documentId);
  return held !== undefined && held >= after;
}

/** Folded through the command layer's cache; nothing is decided on it (claims are appended as they come). */
export const slotDecider: Decider<never, SlotState, SlotEvent> = {
  initialState: initialSlotState,
  eventSchemas: slotEventSchemas,
  evolve: evolveSlots,
  decide: () => [],
};
