import { expect } from 'chai';
import { budgetLimitDecider, periodStartOf, spendDecider, spendPeriodOf, spendStreamId, type SpendCommand, type SpendEvent } from '../../domain/orgs/spend.js';
import type { OrgEvent } from '../../domain/orgs/index.js';
import { formatInvitationToken, parseInvitationToken } from '../../domain/orgs/invitation-token.js';
import { digestsEqual } from '../../domain/orgs/guards.js';
import { deciderSpec } from '../support/decider-spec.js';

const at = '2026-03-15T10:00:00.000Z';
type Record = Extract<SpendCommand, { type: 'RecordLlmSpend' }>;
const record = (over: Partial<Record> = {}): Record => ({ type: 'RecordLlmSpend', orgId: 'o1', amountUsd: 0.25, runId: 'r1', spendId: null, at, ...over });
const spent = (amountUsd: number, spendId: string | null = null): SpendEvent => ({ type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd, runId: null, spendId, at } });

describe('LLM spend decider', () => {
  const spec = deciderSpec(spendDecider);

  it('records spend', () => {
    spec.given([]).when(record()).then([{ type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd: 0.25, runId: 'r1', spendId: null, at } }]);
  });

  it('ignores zero and a spend id already recorded this month', () => {
    spec.given([]).when(record({ amountUsd: 0 })).then([]);
    const first = spec.given([]).when(record({ spendId: 's1' })).events();
    spec.given(first).when(record({ spendId: 's1' })).then([]);
    expect(spec.given(first).when(record({ spendId: 's2' })).events()).to.have.length(1);
    expect(spec.given(first).when(record()).events()).to.have.length(1);
  });

  it('refuses a negative or non-finite amount', () => {
    for (const amountUsd of [-1, Number.NaN, Number.POSITIVE_INFINITY]) spec.given([]).when(record({ amountUsd })).thenThrows('INVALID_AMOUNT');
  });

  it('partitions streams by calendar month (UTC)', () => {
    expect(spendPeriodOf(at)).to.equal('2026-03');
    expect(spendStreamId('o1', '2026-03')).to.equal('orgspend-o1.2026-03');
    expect(periodStartOf(new Date(at))).to.equal('2026-03-01T00:00:00.000Z');
  });

  it("decides the budget on the month's spend: refused once the limit is spent, with what was spent", () => {
    const check = (limitUsd: number | null): SpendCommand => ({ type: 'CheckLlmBudget', limitUsd, period: '2026-03' });
    spec.given([spent(0.5), spent(0.499999)]).when(check(1)).then([]);
    spec.given([spent(5)]).when(check(null)).then([]);
    const err = spec.given([spent(0.5), spent(0.5)]).when(check(1)).thenThrows('BUDGET_EXCEEDED', 'payment_required');
    expect(err.details).to.deep.equal({ limitUsd: 1, spentUsd: 1, period: '2026-03' });
    spec.given([]).when(check(0)).thenThrows('BUDGET_EXCEEDED', 'payment_required');
    // Sums in micro-dollars, as the read model does: no float drift past the limit.
    expect(spec.stateOf([spent(0.1), spent(0.2)]).spentMicroUsd).to.equal(300_000);
  });

  it('folds the limit from the org stream: set, changed, cleared, gone with the organization', () => {
    const fold = deciderSpec(budgetLimitDecider).stateOf;
    const created: OrgEvent = { type: 'OrganizationCreated', data: { orgId: 'o1', name: 'O', description: '', createdBy: 'u1', createdAt: at } };
    const limit = (budgetLimitUsd: number | null): OrgEvent => ({ type: 'OrganizationUpdated', data: { budgetLimitUsd, updatedBy: 'u1', at } });
    expect(fold([created]).limitUsd).to.equal(null);
    expect(fold([created, limit(2)]).limitUsd).to.equal(2);
    expect(fold([created, limit(2), { type: 'OrganizationUpdated', data: { name: 'Renamed', updatedBy: 'u1', at } }]).limitUsd).to.equal(2);
    expect(fold([created, limit(2), limit(null)]).limitUsd).to.equal(null);
    expect(fold([created, limit(2), { type: 'OrganizationDeleted', data: { deletedBy: 'u1', at } }]).limitUsd).to.equal(null);
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
