import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import { parseWorkflowQuery, toWorkflowFilter, workflowSearchFilter } from '../../domain/workflows/index.js';

const errorOf = (q: string) => {
  try {
    workflowSearchFilter(q);
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    return err as DomainError & { details: { position: number } };
  }
  return expect.fail(`expected ${q} to be refused`) as never;
};

describe('workflow query language', () => {
  it('parses comparisons, AND binding tighter than OR, parentheses and NOT', () => {
    expect(parseWorkflowQuery("a = 1 OR b = 'x' AND c != true")).to.deep.equal({
      kind: 'or',
      left: { kind: 'compare', field: 'a', op: '=', value: 1, position: 0 },
      right: { kind: 'and', left: { kind: 'compare', field: 'b', op: '=', value: 'x', position: 9 }, right: { kind: 'compare', field: 'c', op: '!=', value: true, position: 21 } },
    });
    expect(toWorkflowFilter(parseWorkflowQuery("NOT (ExecutionStatus = 'running')"))).to.deep.equal({ $nor: [{ status: { $eq: 'RUNNING' } }] });
  });

  it('translates built-in fields, IN, BETWEEN, STARTS_WITH and search attributes', () => {
    expect(workflowSearchFilter("WorkflowId STARTS_WITH 'order-' and FlowId in ('f1', 'f2')")).to.deep.equal({
      $and: [{ _id: { $gte: 'order-', $lt: 'order-\uffff' } }, { flowId: { $in: ['f1', 'f2'] } }],
    });
    expect(workflowSearchFilter("StartTime BETWEEN '2026-01-01T00:00:00Z' AND '2026-02-01T00:00:00Z'")).to.deep.equal({
      startedAt: { $gte: '2026-01-01T00:00:00.000Z', $lte: '2026-02-01T00:00:00.000Z' },
    });
    expect(workflowSearchFilter('priority >= 3 AND vip = false')).to.deep.equal({ $and: [{ 'searchAttributes.priority': { $gte: 3 } }, { 'searchAttributes.vip': { $eq: false } }] });
    expect(workflowSearchFilter("ExecutionStatus NOT IN ('Completed', 'FAILED')")).to.deep.equal({ status: { $nin: ['COMPLETED', 'FAILED'] } });
    expect(workflowSearchFilter("name = 'it''s'")).to.deep.equal({ 'searchAttributes.name': { $eq: "it's" } });
    expect(workflowSearchFilter("CloseTime < '2026-01-01T00:00:00Z'")).to.deep.equal({ closedAt: { $lt: '2026-01-01T00:00:00.000Z' } });
  });

  it('refuses malformed queries with INVALID_QUERY and the position', () => {
    const cases: Array<[string, number]> = [
      ['', 0],
      ["WorkflowId = 'x", 13],
      ['a = ', 4],
      ['a = 1 AND', 9],
      ['(a = 1', 6],
      ['a = 1)', 5],
      ['a 1', 2],
      ['a = 1 # b', 6],
      ["ExecutionStatus = 'SLEEPY'", 0],
      ["StartTime > 'yesterday'", 0],
      ['a BETWEEN 1 2', 12],
      ['AND = 1', 0],
      ['a IN ()', 6],
      ["StartTime STARTS_WITH '2026'", 0],
    ];
    for (const [q, position] of cases) {
      const err = errorOf(q);
      expect(err.code, q).to.equal('INVALID_QUERY');
      expect(err.kind).to.equal('invalid');
      expect(err.details.position, `${q}: ${err.message}`).to.equal(position);
    }
    expect(errorOf('x'.repeat(2001)).code).to.equal('INVALID_QUERY');
    expect(errorOf(`${'('.repeat(40)}a = 1${')'.repeat(40)}`).message).to.match(/deeper/);
  });
});
