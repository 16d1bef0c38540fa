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
    spec.given([lettered]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', consumerRunning: true, at: later }).then([requested('r1')]);
    spec.given([]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', consumerRunning: true, at: later }).thenThrows('DEAD_LETTER_NOT_FOUND', 'not_found');
    const resolved: DeadLetterEvent = { type: 'DeadLetterResolved', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', at: later } };
    spec.given([lettered, requested('r1'), resolved]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r2', consumerRunning: true, at: later }).thenThrows('DEAD_LETTER_RESOLVED', 'conflict');
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
          _id: 'd1', kind: 'event', consumer: 'c', eventId: 'e1', eventType: 'ProbeCreated', streamId: 'probe-p1', revision: 0, position: 7,
          status: 'resolved', attempts: 6, retries: 2, lastError: 'again', firstFailedAt: at, lastFailedAt: later, resolvedAt: later, discardedAt: null, discardReason: null, version: 4,
        },
      ]);
  });

  const message = { topic: 't', partition: 1, offset: '42', key: 'k', valueBase64: Buffer.from('not json').toString('base64'), size: 8, truncated: false };
  const undecodable: DeadLetterEvent = { type: 'UndecodableMessageDeadLettered', data: { deadLetterId: 'd1', consumer: 'c', message, error: 'Unexpected token', at } };

  it('records an undecodable message once, and never retries it: it can only be discarded', () => {
    const record = { type: 'RecordUndecodableMessage' as const, deadLetterId: 'd1', consumer: 'c', message, error: 'Unexpected token', at };
    spec.given([]).when(record).then([undecodable]);
    spec.given([undecodable]).when(record).then([]); // redelivered before its offset was committed
    expect(spec.stateOf([undecodable])).to.include({ kind: 'undecodable', status: 'open', attempts: 1, event: null, consumer: 'c' });
    spec.given([undecodable]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', consumerRunning: true, at: later }).thenThrows('DEAD_LETTER_NOT_RETRIABLE', 'conflict');
    const discarded: DeadLetterEvent = { type: 'DeadLetterDiscarded', data: { deadLetterId: 'd1', reason: 'garbage from a test producer', at: later } };
    spec.given([undecodable]).when({ type: 'DiscardDeadLetter', deadLetterId: 'd1', reason: 'garbage from a test producer', at: later }).then([discarded]);
  });

  it('refuses a retry no live worker would take (CONSUMER_NOT_RUNNING)', () => {
    spec.given([lettered]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r1', consumerRunning: false, at: later }).thenThrows('CONSUMER_NOT_RUNNING', 'conflict');
  });

  it('discards an open letter once; a discarded letter is not retried, a resolved one not discarded', () => {
    const discarded: DeadLetterEvent = { type: 'DeadLetterDiscarded', data: { deadLetterId: 'd1', reason: null, at: later } };
    const discard = { type: 'DiscardDeadLetter' as const, deadLetterId: 'd1', reason: null, at: later };
    spec.given([lettered, requested('r1')]).when(discard).then([discarded]);
    spec.given([lettered, discarded]).when(discard).then([]);
    spec.given([]).when(discard).thenThrows('DEAD_LETTER_NOT_FOUND', 'not_found');
    const resolved: DeadLetterEvent = { type: 'DeadLetterResolved', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', at: later } };
    spec.given([lettered, requested('r1'), resolved]).when(discard).thenThrows('DEAD_LETTER_RESOLVED', 'conflict');
    spec.given([lettered, discarded]).when({ type: 'RequestRetry', deadLetterId: 'd1', requestId: 'r2', consumerRunning: true, at: later }).thenThrows('DEAD_LETTER_DISCARDED', 'conflict');
    // A retry queued before the discard delivers nothing afterwards.
    spec.given([lettered, requested('r1'), discarded]).when({ type: 'RecordRetrySuccess', deadLetterId: 'd1', requestId: 'r1', by: 'w', at: later }).then([]);
    // The same event failing again later opens the letter again.
    expect(spec.stateOf([lettered, discarded, lettered])).to.include({ status: 'open' });
  });

  it('escapes NUL in every text it stores (FerretDB refuses NUL in strings)', () => {
    const { type: _t, ...command } = { type: 'RecordDeadLetter' as const, ...lettered.data };
    spec.given([]).when({ type: 'RecordDeadLetter', ...command, error: 'bad\u0000byte' })
      .then([{ type: 'EventDeadLettered', data: { ...lettered.data, error: 'bad\\u0000byte' } }]);
    spec.given([lettered, requested('r1')]).when({ type: 'RecordRetryFailure', deadLetterId: 'd1', requestId: 'r1', by: 'w', error: '\u0000x', at: later })
      .then([{ type: 'DeadLetterRetryFailed', data: { deadLetterId: 'd1', requestId: 'r1', by: 'w', error: '\\u0000x', at: later } }]);
    spec.given([]).when({ type: 'RecordUndecodableMessage', deadLetterId: 'd1', consumer: 'c', message: { ...message, key: 'k\u0000' }, error: 'e\u0000', at })
      .then([{ type: 'UndecodableMessageDeadLettered', data: { deadLetterId: 'd1', consumer: 'c', message: { ...message, key: 'k\\u0000' }, error: 'e\\u0000', at } }]);
    spec.given([lettered]).when({ type: 'DiscardDeadLetter', deadLetterId: 'd1', reason: 'r\u0000', at: later })
      .then([{ type: 'DeadLetterDiscarded', data: { deadLetterId: 'd1', reason: 'r\\u0000', at: later } }]);
  });

  it('projects an undecodable letter with its bytes, and a discard; escapes NUL of letters recorded before the escape', async () => {
    await projectionSpec([deadLettersProjector])
      .given([
        { streamId: 'deadletter-d1', event: undecodable },
        { streamId: 'deadletter-d1', event: { type: 'DeadLetterDiscarded', data: { deadLetterId: 'd1', reason: 'junk', at: later } } },
        { streamId: 'deadletter-d2', event: { ...lettered, data: { ...lettered.data, deadLetterId: 'd2', error: 'old\u0000' } } },
      ])
      .thenDocuments('dead_letters', [
        {
          _id: 'd1', kind: 'undecodable', consumer: 'c', message, eventId: null, eventType: null, streamId: null, revision: null, position: null,
          status: 'discarded', attempts: 1, retries: 0, lastError: 'Unexpected token', firstFailedAt: at, lastFailedAt: at, resolvedAt: null, discardedAt: later, discardReason: 'junk', version: 1,
        },
        {
          _id: 'd2', kind: 'event', consumer: 'c', eventId: 'e1', eventType: 'ProbeCreated', streamId: 'probe-p1', revision: 0, position: 7,
          status: 'open', attempts: 5, retries: 0, lastError: 'old\\u0000', firstFailedAt: at, lastFailedAt: at, resolvedAt: null, discardedAt: null, discardReason: null, version: 0,
        },
      ]);
  });
});
