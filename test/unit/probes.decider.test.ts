import { expect } from 'chai';
import { probeDecider, type ProbeCommand, type ProbeEvent } from '../../domain/probes/index.js';
import { reservationDecider } from '../../domain/reservations/index.js';
import { DomainError, fold } from '../../domain/shared/decider.js';

const at = '2026-01-01T00:00:00.000Z';
const given = (events: ProbeEvent[]) => fold(probeDecider.evolve, probeDecider.initialState, events);
const when = (events: ProbeEvent[], command: ProbeCommand) => probeDecider.decide(command, given(events));
const created: ProbeEvent = { type: 'ProbeCreated', data: { probeId: 'p1', name: 'one', createdAt: at } };

function expectRejected(fn: () => unknown, code: string) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('probe decider', () => {
  it('creates a probe once', () => {
    expect(when([], { type: 'CreateProbe', probeId: 'p1', name: 'one', at })).to.deep.equal([created]);
    expectRejected(() => when([created], { type: 'CreateProbe', probeId: 'p1', name: 'one', at }), 'PROBE_EXISTS');
  });

  it('increments an existing probe and ignores a zero increment', () => {
    expect(when([created], { type: 'IncrementProbe', by: 2, at })).to.deep.equal([{ type: 'ProbeIncremented', data: { by: 2, at } }]);
    expect(when([created], { type: 'IncrementProbe', by: 0, at })).to.deep.equal([]);
    expectRejected(() => when([], { type: 'IncrementProbe', by: 1, at }), 'PROBE_NOT_FOUND');
  });

  it('folds increments into the value', () => {
    const state = given([created, { type: 'ProbeIncremented', data: { by: 2, at } }, { type: 'ProbeIncremented', data: { by: -5, at } }]);
    expect(state.value).to.equal(-3);
  });

  it('acknowledges once (idempotent for redelivered events)', () => {
    const ack: ProbeEvent = { type: 'ProbeAcknowledged', data: { by: 'w', at } };
    expect(when([created], { type: 'AcknowledgeProbe', by: 'w', at })).to.deep.equal([ack]);
    expect(when([created, ack], { type: 'AcknowledgeProbe', by: 'w', at })).to.deep.equal([]);
    expectRejected(() => when([], { type: 'AcknowledgeProbe', by: 'w', at }), 'PROBE_NOT_FOUND');
  });
});

describe('reservation decider', () => {
  const claimed = { type: 'ReservationClaimed' as const, data: { key: 'k', ownerId: 'a' } };
  const state = (events: Parameters<typeof reservationDecider.evolve>[1][]) => fold(reservationDecider.evolve, reservationDecider.initialState, events);

  it('claims a free key, is idempotent for the owner, refuses another owner', () => {
    expect(reservationDecider.decide({ type: 'Claim', key: 'k', ownerId: 'a' }, state([]))).to.deep.equal([claimed]);
    expect(reservationDecider.decide({ type: 'Claim', key: 'k', ownerId: 'a' }, state([claimed]))).to.deep.equal([]);
    expectRejected(() => reservationDecider.decide({ type: 'Claim', key: 'k', ownerId: 'b' }, state([claimed])), 'ALREADY_TAKEN');
  });

  it('releases only for the owner, after which another can claim', () => {
    expect(reservationDecider.decide({ type: 'Release', key: 'k', ownerId: 'b' }, state([claimed]))).to.deep.equal([]);
    const released = reservationDecider.decide({ type: 'Release', key: 'k', ownerId: 'a' }, state([claimed]));
    expect(released).to.deep.equal([{ type: 'ReservationReleased', data: { key: 'k', ownerId: 'a' } }]);
    expect(reservationDecider.decide({ type: 'Claim', key: 'k', ownerId: 'b' }, state([claimed, ...released]))).to.have.length(1);
  });
});
