import { expect } from 'chai';
import { probeDecider, type ProbeEvent } from '../../domain/probes/index.js';
import { probesProjector } from '../../projections/probes.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const created: ProbeEvent = { type: 'ProbeCreated', data: { probeId: 'p1', name: 'first', createdAt: at } };

describe('probes: the specifications of test/support on the smallest context', () => {
  const spec = deciderSpec(probeDecider);

  it('decides from the folded events, and refuses with a code and a kind', () => {
    spec.given([]).when({ type: 'CreateProbe', probeId: 'p1', name: 'first', at }).then([created]);
    const err = spec.given([created]).when({ type: 'CreateProbe', probeId: 'p1', name: 'again', at }).thenThrows('PROBE_EXISTS', 'conflict');
    expect(err.message).to.be.a('string');
  });

  it('projects the same documents on every read store, also after a redelivery', async () => {
    await projectionSpec([probesProjector])
      .given([
        { streamId: 'probe-p1', event: created },
        { streamId: 'probe-p1', event: { type: 'ProbeIncremented', data: { by: 2, at } } },
      ])
      .thenDocuments('probes', [{ _id: 'p1', name: 'first', value: 2, version: 1 }]);
  });
});
