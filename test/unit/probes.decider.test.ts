import { expect } from 'chai';
import { probeDecider, type ProbeEvent } from '../../domain/probes/index.js';
import { reservationDecider, type ReservationEvent } from '../../domain/reservations/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const created: ProbeEvent = { type: 'ProbeCreated', data: { probeId: 'p1', name: 'one', createdAt: at } };

describe('probe decider', () => {
  const spec = deciderSpec(probeDecider);

  it('creates a probe once', () => {
    spec.given([]).when({ type: 'CreateProbe', probeId: 'p1', name: 'one', at }).then([created]);
    spec.given([created]).when({ type: 'CreateProbe', probeId: 'p1', name: 'one', at }).thenThrows('PROBE_EXISTS');
  });

  it('increments an existing probe and ignores a zero increment', () => {
    spec.given([created]).when({ type: 'IncrementProbe', by: 2, at }).then([{ type: 'ProbeIncremented', data: { by: 2, at } }]);
    spec.given([created]).when({ type: 'IncrementProbe', by: 0, at }).then([]);
    spec.given([]).when({ type: 'IncrementProbe', by: 1, at }).thenThrows('PROBE_NOT_FOUND');
  });

  it('folds increments into the value', () => {
    const state = spec.stateOf([created, { type: 'ProbeIncremented', data: { by: 2, at } }, { type: 'ProbeIncremented', data: { by: -5, at } }]);
    expect(state.value).to.equal(-3);
  });

  it('acknowledges once (idempotent for redelivered events)', () => {
    const ack: ProbeEvent = { type: 'ProbeAcknowledged', data: { by: 'w', at } };
    spec.given([created]).when({ type: 'AcknowledgeProbe', by: 'w', at }).then([ack]);
    spec.given([created, ack]).when({ type: 'AcknowledgeProbe', by: 'w', at }).then([]);
    spec.given([]).when({ type: 'AcknowledgeProbe', by: 'w', at }).thenThrows('PROBE_NOT_FOUND');
  });
});

describe('reservation decider', () => {
  const spec = deciderSpec(reservationDecider);
  const claimed: ReservationEvent = { type: 'ReservationClaimed', data: { key: 'k', ownerId: 'a' } };

  it('claims a free key, is idempotent for the owner, refuses another owner', () => {
    spec.given([]).when({ type: 'Claim', key: 'k', ownerId: 'a' }).then([claimed]);
    spec.given([claimed]).when({ type: 'Claim', key: 'k', ownerId: 'a' }).then([]);
    spec.given([claimed]).when({ type: 'Claim', key: 'k', ownerId: 'b' }).thenThrows('ALREADY_TAKEN');
  });

  it('releases only for the owner, after which another can claim', () => {
    spec.given([claimed]).when({ type: 'Release', key: 'k', ownerId: 'b' }).then([]);
    const released = spec.given([claimed]).when({ type: 'Release', key: 'k', ownerId: 'a' }).then([{ type: 'ReservationReleased', data: { key: 'k', ownerId: 'a' } }]);
    expect(spec.given([claimed, ...released]).when({ type: 'Claim', key: 'k', ownerId: 'b' }).events()).to.have.length(1);
  });
});
