import { expect } from 'chai';
import { isFinished, runDecider, type RequestRunCommand, type RunEvent } from '../../domain/runs/index.js';
import { deciderSpec } from '../support/decider-spec.js';

/** RUN_TIMEOUT_MS and RUN_CLAIM_TIMEOUT_MS as the run decider judges them (time comes with the command). */

const spec = deciderSpec(runDecider);
const t0 = Date.parse('2026-04-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0 + ms).toISOString();
const zero = { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };
const RUN_TIMEOUT = 600_000;
const CLAIM_TIMEOUT = 30_000;

const node = (id: string) => ({ id, data: { nodeType: 'transform', template: id } });
const request: RequestRunCommand = {
  type: 'RequestRun',
  processId: 'p1',
  flowId: 'f1',
  flowVersion: 1,
  ownerId: 'u1',
  orgId: null,
  workspaceId: null,
  mode: 'flow',
  nodes: [node('a'), node('b')],
  edges: [{ id: 'e1', source: 'a', target: 'b' }],
  inputs: {},
  async: true,
  requestedBy: 'u1',
  at: at(0),
};
const requested = spec.given([]).when(request).events()[0];
const claimed: RunEvent = { type: 'RunStarted', data: { workerId: 'w1', at: at(10) } };
const startedA: RunEvent = { type: 'NodeStarted', data: { nodeId: 'a', attempt: 1, at: at(20) } };
const running = [requested, claimed, startedA];
const timeOut = (ms: number) => ({ type: 'TimeOutRun' as const, timeoutMs: RUN_TIMEOUT, at: at(ms) });
const sweep = (ms: number, workerId = 'sweeper') => ({ type: 'SweepUnclaimedRun' as const, workerId, claimTimeoutMs: CLAIM_TIMEOUT, runTimeoutMs: RUN_TIMEOUT, at: at(ms) });

describe('run decider: RUN_TIMEOUT_MS (TimeOutRun)', () => {
  it('times out a running run once past the timeout, counted from the request; its running node ends ABORTED', () => {
    const events = spec.given(running).when(timeOut(RUN_TIMEOUT)).events();
    expect(events).to.deep.equal([
      {
        type: 'RunTimedOut',
        data: { timeoutMs: RUN_TIMEOUT, reason: `the run was still running ${RUN_TIMEOUT} ms after it was requested (RUN_TIMEOUT_MS)`, usage: zero, at: at(RUN_TIMEOUT) },
      },
    ]);
    const state = spec.stateOf([...running, ...events]);
    expect(state.status).to.equal('timed_out');
    expect(isFinished(state.status)).to.equal(true);
    expect(state.failure).to.deep.equal({ code: 'RUN_TIMED_OUT', reason: (events[0].data as { reason: string }).reason, nodeId: null });
    expect(state.nodes.a).to.include({ status: 'failed', finishedAt: at(RUN_TIMEOUT) });
    expect(state.nodes.a.error).to.deep.equal({ code: 'ABORTED', message: 'the run ended while this node ran' });
    expect(state.nodes.b.status).to.equal('pending');
    expect(state.finishedAt).to.equal(at(RUN_TIMEOUT));
  });

  it('is no event before the deadline', () => {
    spec.given(running).when(timeOut(RUN_TIMEOUT - 1)).then([]);
    spec.given([requested]).when(timeOut(1_000)).then([]);
  });

  it('times out a queued run too (nobody claimed it in time)', () => {
    const [event] = spec.given([requested]).when(timeOut(RUN_TIMEOUT + 5)).events();
    expect(event.type).to.equal('RunTimedOut');
    expect(event.data).to.include({ reason: `the run was still queued (no worker claimed it) ${RUN_TIMEOUT} ms after it was requested (RUN_TIMEOUT_MS)` });
  });

  it('never records a second terminal event: timed out, completed, failed or stopped runs stay as they are', () => {
    const timedOut = spec.given(running).when(timeOut(RUN_TIMEOUT)).events();
    spec.given([...running, ...timedOut]).when(timeOut(RUN_TIMEOUT * 2)).then([]);
    spec.given([...running, ...timedOut]).when(sweep(RUN_TIMEOUT * 2)).then([]);
    const completed: RunEvent[] = [
      { type: 'NodeCompleted', data: { nodeId: 'a', attempt: 1, output: 'a', metadata: {}, conditionalResults: [], usage: { total_tokens: 0, cost: 0 }, executionTime: 1, at: at(30) } },
      { type: 'NodeStarted', data: { nodeId: 'b', attempt: 1, at: at(40) } },
      { type: 'NodeCompleted', data: { nodeId: 'b', attempt: 1, output: 'b', metadata: {}, conditionalResults: [], usage: { total_tokens: 0, cost: 0 }, executionTime: 1, at: at(50) } },
    ];
    const done = [...running, ...completed, { type: 'RunCompleted', data: { outputs: { b: 'b' }, outputsTruncated: false, usage: zero, at: at(50) } } as RunEvent];
    spec.given(done).when(timeOut(RUN_TIMEOUT * 2)).then([]);
    spec.given([...running, { type: 'RunFailed', data: { code: 'X', reason: 'x', nodeId: null, usage: zero, at: at(30) } }]).when(timeOut(RUN_TIMEOUT * 2)).then([]);
    spec.given([...running, { type: 'RunStopRequested', data: { by: 'u1', at: at(30) } }, { type: 'RunStopped', data: { usage: zero, at: at(31) } }]).when(timeOut(RUN_TIMEOUT * 2)).then([]);
  });

  it('a timed-out run refuses the worker\'s late steps and a stop', () => {
    const timedOut = [...running, ...spec.given(running).when(timeOut(RUN_TIMEOUT)).events()];
    spec.given(timedOut).when({ type: 'CompleteNode', workerId: 'w1', nodeId: 'a', output: 'late', executionTime: 1, at: at(RUN_TIMEOUT + 1) }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given(timedOut).when({ type: 'RequestStop', by: 'u1', at: at(RUN_TIMEOUT + 1) }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given(timedOut).when({ type: 'FailRun', reason: 'x', at: at(RUN_TIMEOUT + 1) }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
  });

  it('a run that does not exist is RUN_NOT_FOUND', () => {
    spec.given([]).when(timeOut(RUN_TIMEOUT)).thenThrows('RUN_NOT_FOUND', 'not_found');
    spec.given([]).when(sweep(RUN_TIMEOUT)).thenThrows('RUN_NOT_FOUND', 'not_found');
  });
});

describe('run decider: RUN_CLAIM_TIMEOUT_MS (SweepUnclaimedRun)', () => {
  it('leaves a queued run alone before the claim timeout', () => {
    spec.given([requested]).when(sweep(CLAIM_TIMEOUT - 1)).then([]);
  });

  it('claims a queued run nobody claimed within the claim timeout, saying how long it waited', () => {
    const events = spec.given([requested]).when(sweep(CLAIM_TIMEOUT + 500)).events();
    expect(events).to.deep.equal([{ type: 'RunStarted', data: { workerId: 'sweeper', unclaimedForMs: CLAIM_TIMEOUT + 500, at: at(CLAIM_TIMEOUT + 500) } }]);
    const state = spec.stateOf([requested, ...events]);
    expect(state).to.include({ status: 'running', workerId: 'sweeper' });
    // The run worker's late ClaimRun is refused: the sweeper holds it.
    spec.given([requested, ...events]).when({ type: 'ClaimRun', workerId: 'w1', at: at(CLAIM_TIMEOUT + 600) }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
  });

  it('times a queued run out instead of claiming it once past the run timeout', () => {
    const events = spec.given([requested]).when(sweep(RUN_TIMEOUT)).events();
    expect(events.map((e) => e.type)).to.deep.equal(['RunTimedOut']);
    expect(spec.stateOf([requested, ...events]).status).to.equal('timed_out');
  });

  it('is no event for a run already claimed (by anyone) or finished: two sweeping workers claim once', () => {
    spec.given(running).when(sweep(CLAIM_TIMEOUT * 2)).then([]);
    const first = spec.given([requested]).when(sweep(CLAIM_TIMEOUT + 1, 'sweeper-a')).events();
    spec.given([requested, ...first]).when(sweep(CLAIM_TIMEOUT + 2, 'sweeper-b')).then([]);
    const stopped = spec.given([requested]).when({ type: 'RequestStop', by: 'u1', at: at(5) }).events();
    spec.given([requested, ...stopped]).when(sweep(CLAIM_TIMEOUT * 2)).then([]);
  });
});
