import { expect } from 'chai';
import { runDecider, type RequestRunCommand, type RunEvent } from '../../domain/runs/index.js';
import { deciderSpec } from '../support/decider-spec.js';

/** PruneRunHistory: a finished run cut down to its summary, and the truncated stream folds to it. */

const spec = deciderSpec(runDecider);
const t0 = Date.parse('2026-04-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0 + ms).toISOString();
const node = (id: string) => ({ id, data: { nodeType: 'transform', template: id } });
const request: RequestRunCommand = {
  type: 'RequestRun', processId: 'p1', flowId: 'f1', flowVersion: 3, ownerId: 'u1', orgId: 'o1', workspaceId: 'ws1', mode: 'flow',
  nodes: [node('a'), node('b')], edges: [{ id: 'e1', source: 'a', target: 'b' }], inputs: { secret: 'kept out' }, async: true, requestedBy: 'u1', at: at(0),
};
const requested = spec.given([]).when(request).events()[0];
const usage = { total_tokens: 7, prompt_tokens: 5, completion_tokens: 2, cost: 0.25 };
const history: RunEvent[] = [
  requested,
  { type: 'RunStarted', data: { workerId: 'w1', at: at(10) } },
  { type: 'NodeStarted', data: { nodeId: 'a', attempt: 1, at: at(20) } },
  { type: 'NodeCompleted', data: { nodeId: 'a', attempt: 1, output: 'big output', metadata: { m: 1 }, conditionalResults: [], usage, executionTime: 12, at: at(32) } },
  { type: 'NodeStarted', data: { nodeId: 'b', attempt: 1, at: at(40) } },
  { type: 'NodeFailed', data: { nodeId: 'b', attempt: 1, error: { code: 'HTTP_STATUS', message: '502' }, executionTime: 5, at: at(45) } },
  { type: 'RunFailed', data: { code: 'NODE_FAILED', reason: 'b failed', nodeId: 'b', usage, at: at(46) } },
];
const prune = { type: 'PruneRunHistory' as const, reason: 'count' as const, keepDays: 30, keepLast: 2, at: at(99_000) };

describe('run decider: PruneRunHistory (retention)', () => {
  it('sums a finished run up; the stream starting at the summary folds to the same summary and version', () => {
    const [pruned] = spec.given(history).when(prune).events();
    expect(pruned.type).to.equal('RunHistoryPruned');
    expect(pruned.data).to.include({ reason: 'count', keepDays: 30, keepLast: 2, prunedEvents: history.length });
    const full = spec.stateOf([...history, pruned]);
    const truncated = spec.stateOf([pruned]);
    expect(truncated, 'folding the truncated stream equals folding the whole one').to.deep.equal(full);
    expect(truncated.version, 'the revision of the summary event').to.equal(history.length);
    const before = spec.stateOf(history);
    expect(truncated).to.include({ status: 'failed', flowId: 'f1', flowVersion: 3, orgId: 'o1', requestedAt: at(0), startedAt: at(10), finishedAt: at(46), outputs: null });
    expect(truncated.usage).to.deep.equal(before.usage);
    expect(truncated.failure).to.deep.equal(before.failure);
    expect(truncated.inputs, 'inputs are not kept').to.deep.equal({});
    expect(truncated.nodes.a).to.include({ status: 'completed', executionTime: 12, startedAt: at(20), finishedAt: at(32) });
    expect(truncated.nodes.a.output, 'node outputs are not kept').to.equal(undefined);
    expect(truncated.nodes.b.error).to.deep.equal({ code: 'HTTP_STATUS', message: '502' });
    expect(truncated.definition.nodes).to.deep.equal([{ id: 'a', data: { nodeType: 'transform' } }, { id: 'b', data: { nodeType: 'transform' } }]);
    expect(truncated.historyPruned).to.deep.equal({ at: at(99_000), reason: 'count', prunedEvents: history.length });
  });

  it('records nothing for a run already pruned; refuses an active run (RUN_NOT_DONE) and a missing one', () => {
    const [pruned] = spec.given(history).when(prune).events();
    spec.given([pruned]).when(prune).then([]);
    spec.given(history.slice(0, 3)).when(prune).thenThrows('RUN_NOT_DONE', 'conflict');
    spec.given([]).when(prune).thenThrows('RUN_NOT_FOUND', 'not_found');
  });

  it('every command on a pruned run is refused as finished, as on the whole run', () => {
    const [pruned] = spec.given(history).when(prune).events();
    spec.given([pruned]).when({ type: 'ClaimRun', workerId: 'w2', at: at(100_000) }).thenThrows('RUN_ALREADY_FINISHED');
  });
});
