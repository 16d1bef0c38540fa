import { expect } from 'chai';
import { deadLetterDecider, type DeadLetterEvent } from '../../domain/operations/dead-letters.js';
import { deadLettersProjector } from '../../projections/operations-dead-letters.js';
import { deciderSpec } from '../support/decider-spec.js';
import { projectionSpec } from '../support/projection-spec.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:01:00.000Z';
const failed = { id: 'e1', type: 'ProbeCreated', streamId: 'probe-p1', revision: 0, position: 7 };
const lettered: DeadLetterEvent = {
  type: 'EventDeadLettered',
  data: { deadLetterId: 'd1', consumer: 'c', event: failed, error: 'boom', attempts: 5, firstFailedAt: at, lastFailedAt: at },
};
const requested = (requestId: string): DeadLetterEvent => ({ type: 'DeadLetterRetryRequested', data: { deadLetterId: 'd1', requestId, requestedAt: later } });

describe('dead letters', () => {
  const spec = deciderSpec(deadLetterDecider);

  it('records every round of failed delivery', () => {
    const { type: _t, ...command } = { type: 'RecordDeadLetter' as const, ...lettered.data };
    spec.given([]).when({ type: 'RecordDeadLetter', ...command }).then([lettered]);
    spec.given([lettered]).when({ type: 'RecordDeadLetter', ...command }).then([lettered]);
    expect(spec.stateOf([lettered, lettered])).to.include({ attempts: 10, status: 'open', lastError: 'boom' });
  });

  it('accepts a retry request only for an open letter that exists', () => {
    spec.given([lettered]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', at: later }).then([requested('r1')]);
    spec.given([]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', at: later }).thenThrows('DEAD_LETTER_NOT_FOUND', 'not_found');
    const resolved: DeadLetterEvent = { type: 'DeadLetterResolved', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', at: later } };
    spec.given([lettered, requested('r1'), resolved]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r2', at: later }).thenThrows('DEAD_LETTER_RESOLVED', 'conflict');
  });

  it('answers each retry request once (a redelivered request changes nothing)', () => {
    const failure: DeadLetterEvent = { type: 'DeadLetterRetryFailed', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', error: 'again', at: later } };
    spec.given([lettered, requested('r1')]).when({ type: 'RecordRetryFailure', deadLetterId: 'd1', requestId: 'r1', by: 'w', error: 'again', at: later }).then([failure]);
    spec.given([lettered, requested('r1'), failure]).when({ type: 'RecordRetrySuccess', deadLetterId: 'd1', requestId: 'r1', by: 'w', at: later }).then([]);
    expect(spec.stateOf([lettered, requested('r1'), failure])).to.include({ attempts: 6, status: 'open', lastError: 'again' });
  });

  it('projects the letter with its attempts and status, the same after a redelivery', async () => {
    await projectionSpec([deadLettersProjector])
      .given([
        { streamId: 'deadletter-d1', event: lettered },
        { streamId: 'deadletter-d1', event: requested('r1') },
        { streamId: 'deadletter-d1', event: { type: 'DeadLetterRetryFailed', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', error: 'again', at: later } } },
        { streamId: 'deadletter-d1', event: requested('r2') },
        { streamId: 'deadletter-d1', event: { type: 'DeadLetterResolved', data: { deadLetterId: 'd1', requestId: 'r2', by: 'w', at: later } } },
      ])
      .thenDocuments('dead_letters', [
        {
          _id: 'd1', consumer: 'c', eventId: 'e1', eventType: 'ProbeCreated', streamId: 'probe-p1', revision: 0, position: 7,
          status: 'resolved', attempts: 6, retries: 2, lastError: 'again', firstFailedAt: at, lastFailedAt: later, resolvedAt: later, version: 4,
        },
      ]);
  });
});
