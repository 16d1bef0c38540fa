import { expect } from 'chai';
import { DomainError, fold } from '../../domain/shared/decider.js';
import { periodStartOf, spendDecider, spendPeriodOf, spendStreamId, type SpendCommand, type SpendEvent } from '../../domain/orgs/spend.js';
import { formatInvitationToken, parseInvitationToken } from '../../domain/orgs/invitation-token.js';
import { digestsEqual } from '../../domain/orgs/guards.js';

const at = '2026-03-15T10:00:00.000Z';
const when = (events: SpendEvent[], command: SpendCommand) => spendDecider.decide(command, fold(spendDecider.evolve, spendDecider.initialState, events));
const record = (over: Partial<SpendCommand> = {}): SpendCommand => ({ type: 'RecordLlmSpend', orgId: 'o1', amountUsd: 0.25, runId: 'r1', spendId: null, at, ...over });

describe('LLM spend decider', () => {
  it('records spend', () => {
    expect(when([], record())).to.deep.equal([{ type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd: 0.25, runId: 'r1', spendId: null, at } }]);
  });

  it('ignores zero and a spend id already recorded this month', () => {
    expect(when([], record({ amountUsd: 0 }))).to.deep.equal([]);
    const first = when([], record({ spendId: 's1' }));
    expect(when(first, record({ spendId: 's1' }))).to.deep.equal([]);
    expect(when(first, record({ spendId: 's2' }))).to.have.length(1);
    expect(when(first, record())).to.have.length(1);
  });

  it('refuses a negative or non-finite amount', () => {
    for (const amountUsd of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => when([], record({ amountUsd }))).to.throw(DomainError).with.property('code', 'INVALID_AMOUNT');
    }
  });

  it('partitions streams by calendar month (UTC)', () => {
    expect(spendPeriodOf(at)).to.equal('2026-03');
    expect(spendStreamId('o1', '2026-03')).to.equal('orgspend-o1.2026-03');
    expect(periodStartOf(new Date(at))).to.equal('2026-03-01T00:00:00.000Z');
  });
});

describe('invitation tokens', () => {
  it('round-trips and refuses malformed tokens', () => {
    const token = formatInvitationToken('org-1', 'inv_2', 'A'.repeat(43));
    expect(parseInvitationToken(token)).to.deep.equal({ orgId: 'org-1', invitationId: 'inv_2', secret: 'A'.repeat(43) });
    for (const bad of ['', 'a.b', 'a.b.c.d', `a..${'A'.repeat(43)}`, `a.b.short`, `a/b.c.${'A'.repeat(43)}`]) expect(parseInvitationToken(bad), bad).to.equal(null);
  });

  it('compares digests exactly', () => {
    expect(digestsEqual('ab'.repeat(32), 'ab'.repeat(32))).to.equal(true);
    expect(digestsEqual('ab'.repeat(32), 'ac'.repeat(32))).to.equal(false);
    expect(digestsEqual('ab'.repeat(32), 'ab')).to.equal(false);
    expect(digestsEqual('', 'ab')).to.equal(false);
  });
});
