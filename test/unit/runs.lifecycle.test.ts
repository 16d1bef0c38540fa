import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import { MAX_NODE_ATTEMPTS, foldRun, nextSteps, runDecider, type RequestRunCommand, type RunCommand, type RunEvent } from '../../domain/runs/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-04-01T00:00:00.000Z';
const later = '2026-04-01T00:01:00.000Z';
const zero = { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };

const given = (events: RunEvent[]) => foldRun(events);
function when(events: RunEvent[], command: RunCommand): RunEvent[] {
  const out = runDecider.decide(command, given(events));
  for (const e of out) expect(runDecider.eventSchemas[e.type].safeParse(e.data).success, `${e.type} matches its schema`).to.equal(true);
  return out;
}
function expectRejected(fn: () => unknown, code: string, status = 409): DomainError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code, (err as Error).message).to.equal(code);
    expect(httpStatusOf(err as DomainError)).to.equal(status);
    return err as DomainError;
  }
  return expect.fail(`expected ${code}`);
}
const types = (events: RunEvent[]) => events.map((e) => e.type);

const node = (id: string, data: Record<string, unknown> = {}) => ({ id, data: { nodeType: 'transform', template: id, ...data } });
const request: RequestRunCommand = {
  type: 'RequestRun',
  processId: 'p1',
  flowId: 'f1',
  flowVersion: 2,
  ownerId: 'u1',
  orgId: null,
  workspaceId: null,
  mode: 'flow',
  nodes: [node('a'), node('b'), node('c')],
  edges: [
    { id: 'e1', source: 'a', target: 'b' },
    { id: 'e2', source: 'b', target: 'c' },
  ],
  inputs: {},
  async: true,
  requestedBy: 'u1',
  at,
};
const requested = when([], request)[0];
const claimed: RunEvent = { type: 'RunStarted', data: { workerId: 'w1', at } };
const started = (nodeId: string, attempt = 1): RunEvent => ({ type: 'NodeStarted', data: { nodeId, attempt, at } });
const completed = (nodeId: string): RunEvent => ({
  type: 'NodeCompleted',
  data: { nodeId, attempt: 1, output: `out-${nodeId}`, metadata: {}, conditionalResults: [], usage: { total_tokens: 2, cost: 0.01 }, executionTime: 1, at },
});
const stopAsked: RunEvent = { type: 'RunStopRequested', data: { by: 'u1', at } };
const running = [requested, claimed, started('a')];

describe('run decider: CompleteRun and FailRun', () => {
  it('completes a run whose end was not recorded (repair), and is a no-op once completed', () => {
    const allDone = [requested, claimed, started('a'), completed('a'), started('b'), completed('b'), started('c'), completed('c')];
    const events = when(allDone, { type: 'CompleteRun', workerId: 'w1', at: later });
    expect(events).to.deep.equal([
      { type: 'RunCompleted', data: { outputs: { c: 'out-c' }, outputsTruncated: false, usage: { total_tokens: 6, prompt_tokens: 0, completion_tokens: 0, cost: 0.03 }, at: later } },
    ]);
    expect(when([...allDone, ...events], { type: 'CompleteRun', at: later })).to.deep.equal([]);
  });

  it('refuses to complete a run with work left, or one that is not claimed', () => {
    expectRejected(() => when(running, { type: 'CompleteRun', at: later }), 'RUN_NOT_DONE');
    expectRejected(() => when([requested], { type: 'CompleteRun', at: later }), 'RUN_NOT_CLAIMED');
    expectRejected(() => when(running, { type: 'CompleteRun', workerId: 'w2', at: later }), 'RUN_CLAIMED_BY_OTHER_WORKER');
  });

  it('fails a run for a reason the graph does not give, aborting what runs; again is a no-op', () => {
    const events = when(running, { type: 'FailRun', reason: 'run timed out after 60000 ms', code: 'TIMEOUT', at: later });
    expect(events).to.deep.equal([{ type: 'RunFailed', data: { code: 'TIMEOUT', reason: 'run timed out after 60000 ms', nodeId: null, usage: zero, at: later } }]);
    const state = given([...running, ...events]);
    expect(state.status).to.equal('failed');
    expect(state.nodes.a).to.deep.include({ status: 'failed', error: { code: 'ABORTED', message: 'the run ended while this node ran' } });
    expect(when([...running, ...events], { type: 'FailRun', reason: 'again', at })).to.deep.equal([]);
  });

  it('fails a queued run too, with the default code and a node', () => {
    const [e] = when([requested], { type: 'FailRun', reason: 'flow version missing', nodeId: 'b', at });
    expect(e.data).to.deep.include({ code: 'RUN_FAILED', nodeId: 'b' });
  });

  it('refuses to fail a completed run, for an unknown node, from a foreign worker, or an unknown run', () => {
    const done: RunEvent = { type: 'RunCompleted', data: { outputs: {}, outputsTruncated: false, usage: zero, at } };
    expectRejected(() => when([requested, claimed, done], { type: 'FailRun', reason: 'x', at }), 'RUN_ALREADY_FINISHED');
    expectRejected(() => when(running, { type: 'FailRun', reason: 'x', nodeId: 'zz', at }), 'NODE_NOT_FOUND', 404);
    expectRejected(() => when(running, { type: 'FailRun', reason: 'x', workerId: 'w2', at }), 'RUN_CLAIMED_BY_OTHER_WORKER');
    expectRejected(() => when([], { type: 'FailRun', reason: 'x', at }), 'RUN_NOT_FOUND', 404);
  });
});

describe('run decider: stopping', () => {
  it('stops a queued run at once', () => {
    const events = when([requested], { type: 'RequestStop', by: 'u1', at: later });
    expect(events).to.deep.equal([
      { type: 'RunStopRequested', data: { by: 'u1', at: later } },
      { type: 'RunStopped', data: { usage: zero, at: later } },
    ]);
    expect(given([requested, ...events]).status).to.equal('stopped');
  });

  it('asks a worker with a node in flight to stop, then records its confirmation', () => {
    expect(when(running, { type: 'RequestStop', by: 'u1', at })).to.deep.equal([stopAsked]);
    expect(when([...running, stopAsked], { type: 'RequestStop', by: 'u2', at }), 'asking twice').to.deep.equal([]);
    const events = when([...running, stopAsked], { type: 'ConfirmStop', workerId: 'w1', at: later });
    expect(events).to.deep.equal([{ type: 'RunStopped', data: { usage: zero, at: later } }]);
    const state = given([...running, stopAsked, ...events]);
    expect(state).to.include({ status: 'stopped', finishedAt: later });
    expect(state.nodes.a.status).to.equal('failed');
    expect(state.nodes.a.error?.code).to.equal('ABORTED');
    expect(when([...running, stopAsked, ...events], { type: 'ConfirmStop', at }), 'confirming twice').to.deep.equal([]);
  });

  it('stops at once when nothing is in flight, and when the last running node ends', () => {
    const between = [requested, claimed, started('a'), completed('a')];
    expect(types(when(between, { type: 'RequestStop', by: null, at }))).to.deep.equal(['RunStopRequested', 'RunStopped']);
    const events = when([...running, stopAsked], { type: 'CompleteNode', workerId: 'w1', nodeId: 'a', output: 'late', executionTime: 1, at });
    expect(types(events)).to.deep.equal(['NodeCompleted', 'RunStopped']);
  });

  it('refuses to stop a finished run, and to confirm a stop nobody asked for', () => {
    const done: RunEvent = { type: 'RunCompleted', data: { outputs: {}, outputsTruncated: false, usage: zero, at } };
    expectRejected(() => when([requested, claimed, done], { type: 'RequestStop', by: 'u1', at }), 'RUN_ALREADY_FINISHED');
    expectRejected(() => when([requested, claimed, done], { type: 'ConfirmStop', at }), 'RUN_ALREADY_FINISHED');
    expectRejected(() => when(running, { type: 'ConfirmStop', at }), 'STOP_NOT_REQUESTED');
    expectRejected(() => when([...running, stopAsked], { type: 'ConfirmStop', workerId: 'w2', at }), 'RUN_CLAIMED_BY_OTHER_WORKER');
    expectRejected(() => when([], { type: 'RequestStop', by: 'u1', at }), 'RUN_NOT_FOUND', 404);
  });
});

describe('run decider: resuming after a worker crash', () => {
  const crashed = [requested, claimed, started('a'), completed('a'), started('b')];

  it('hands the run to a new worker; the interrupted node starts again with the next attempt', () => {
    const events = when(crashed, { type: 'ResumeRun', workerId: 'w2', at: later });
    expect(events).to.deep.equal([{ type: 'RunResumed', data: { workerId: 'w2', previousWorkerId: 'w1', interruptedNodeIds: ['b'], at: later } }]);
    const resumed = [...crashed, ...events];
    const state = given(resumed);
    expect(state).to.include({ status: 'running', workerId: 'w2', resumes: 1 });
    expect(state.nodes.a.status, 'completed work is kept').to.equal('completed');
    expect(state.nodes.b).to.include({ status: 'pending', attempts: 1 });
    expect(nextSteps(state.definition, state).ready).to.deep.equal(['b']);
    expect(when(resumed, { type: 'StartNode', workerId: 'w2', nodeId: 'b', at: later })).to.deep.equal([{ type: 'NodeStarted', data: { nodeId: 'b', attempt: 2, at: later } }]);
  });

  it('fences off the old worker once another took over', () => {
    const resumed = [...crashed, ...when(crashed, { type: 'ResumeRun', workerId: 'w2', at: later })];
    expectRejected(() => when(resumed, { type: 'CompleteNode', workerId: 'w1', nodeId: 'b', output: 'stale', executionTime: 1, at: later }), 'RUN_CLAIMED_BY_OTHER_WORKER');
    const again = [...resumed, started('b', 2)];
    expectRejected(() => when(again, { type: 'CompleteNode', workerId: 'w2', nodeId: 'b', attempt: 1, output: 'stale', executionTime: 1, at: later }), 'STALE_ATTEMPT');
  });

  it('fails the run instead of restarting a node interrupted too often', () => {
    const third = [requested, claimed, started('a', MAX_NODE_ATTEMPTS)];
    const events = when(third, { type: 'ResumeRun', workerId: 'w2', at: later });
    expect(types(events)).to.deep.equal(['RunFailed']);
    expect(events[0].data).to.deep.include({ code: 'NODE_INTERRUPTED_TOO_OFTEN', nodeId: 'a' });
    expect(types(when([requested, claimed, started('a', 1)], { type: 'ResumeRun', workerId: 'w2', maxAttempts: 1, at }))).to.deep.equal(['RunFailed']);
  });

  it('just stops a run that was asked to stop', () => {
    expect(when([...crashed, stopAsked], { type: 'ResumeRun', workerId: 'w2', at: later })).to.deep.equal([{ type: 'RunStopped', data: { usage: given(crashed).usage, at: later } }]);
  });

  it('refuses to resume a run never claimed, a finished one, an unknown one', () => {
    expectRejected(() => when([requested], { type: 'ResumeRun', workerId: 'w2', at }), 'RUN_NOT_CLAIMED');
    const failed: RunEvent = { type: 'RunFailed', data: { code: 'X', reason: 'x', nodeId: null, usage: zero, at } };
    expectRejected(() => when([requested, claimed, failed], { type: 'ResumeRun', workerId: 'w2', at }), 'RUN_ALREADY_FINISHED');
    expectRejected(() => when([], { type: 'ResumeRun', workerId: 'w2', at }), 'RUN_NOT_FOUND', 404);
  });
});

describe('run decider: a whole run driven by the scheduler', () => {
  it('runs a diamond to completion, with exactly the events a consumer would record', () => {
    const diamond: RequestRunCommand = {
      ...request,
      nodes: [node('a'), node('b'), node('c'), node('d', { nodeType: 'output', outputKey: 'result' })],
      edges: [
        { id: 'e1', source: 'a', target: 'b' },
        { id: 'e2', source: 'a', target: 'c' },
        { id: 'e3', source: 'b', target: 'd' },
        { id: 'e4', source: 'c', target: 'd' },
      ],
      claimBy: 'w1',
    };
    let log = when([], diamond);
    const exec = (command: RunCommand) => (log = [...log, ...when(log, command)]);
    let rounds = 0;
    while (given(log).status === 'running' && rounds++ < 10) {
      const state = given(log);
      const { ready } = nextSteps(state.definition, state);
      for (const nodeId of ready) exec({ type: 'StartNode', workerId: 'w1', nodeId, at });
      for (const nodeId of ready) exec({ type: 'CompleteNode', workerId: 'w1', nodeId, output: `out-${nodeId}`, usage: { total_tokens: 1, cost: 0 }, executionTime: 1, at });
    }
    expect(rounds, 'a, then b and c together, then d').to.equal(3);
    expect(types(log)).to.deep.equal([
      'RunRequested',
      'RunStarted',
      'NodeStarted',
      'NodeCompleted',
      'NodeStarted',
      'NodeStarted',
      'NodeCompleted',
      'NodeCompleted',
      'NodeStarted',
      'NodeCompleted',
      'RunCompleted',
    ]);
    const final = given(log);
    expect(final.outputs).to.deep.equal({ result: 'out-d' });
    expect(final.usage.total_tokens).to.equal(4);
    expect(final.version).to.equal(log.length - 1);
  });
});
