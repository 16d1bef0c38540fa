import { expect } from 'chai';
import { terminalSlotsDecider, type TerminalSlotCommand, type TerminalSlotEvent } from '../../domain/terminals/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const spec = deciderSpec(terminalSlotsDecider);
const take = (terminalId: string, reclaim: string[] = [], limit = 2): TerminalSlotCommand => ({ type: 'TakeTerminalSlot', terminalId, limit, reclaim, at });
const taken = (terminalId: string): TerminalSlotEvent => ({ type: 'TerminalSlotTaken', data: { terminalId, at } });
const released = (terminalId: string, reason: 'disconnected' | 'offline'): TerminalSlotEvent => ({ type: 'TerminalSlotReleased', data: { terminalId, reason, at } });

describe('terminal slots decider (REMOTE_MAX_TERMINALS_PER_USER)', () => {
  it('takes slots up to the limit, then refuses with TOO_MANY_TERMINALS; taking a held slot again is nothing', () => {
    spec.given([]).when(take('a')).then([taken('a')]);
    spec.given([taken('a')]).when(take('a')).then([]);
    const err = spec.given([taken('a'), taken('b')]).when(take('c')).thenThrows('TOO_MANY_TERMINALS', 'conflict');
    expect(err.details).to.deep.equal({ limit: 2 });
  });

  it('a release frees a slot (once); reclaimed offline holders are released in the same decision', () => {
    spec.given([taken('a'), taken('b')]).when({ type: 'ReleaseTerminalSlot', terminalId: 'a', reason: 'disconnected', at }).then([released('a', 'disconnected')]);
    spec.given([taken('a'), released('a', 'disconnected')]).when({ type: 'ReleaseTerminalSlot', terminalId: 'a', reason: 'disconnected', at }).then([]);
    spec.given([taken('a'), taken('b')]).when(take('c', ['a', 'x'])).then([released('a', 'offline'), taken('c')]);
    expect(spec.stateOf([taken('a'), taken('b'), released('a', 'offline'), taken('c')]).held.map((h) => h.terminalId)).to.deep.equal(['b', 'c']);
  });
});
