import { expect } from 'chai';
import { MAX_NODE_ATTEMPTS, nextSteps, runDecider, type RequestRunCommand, type RunCommand, type RunEvent } from '../../domain/runs/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(runDecider);
const at = '2026-04-01T00:00:00.000Z';
const later = '2026-04-01T00:01:00.000Z';
const zero = { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 };

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
const requested = spec.given([]).when(request).events()[0];
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
    const events = spec.given(allDone).when({ type: 'CompleteRun', workerId: 'w1', at: later }).events();
    expect(events).to.deep.equal([
      { type: 'RunCompleted', data: { outputs: { c: 'out-c' }, outputsTruncated: false, usage: { total_tokens: 6, prompt_tokens: 0, completion_tokens: 0, cost: 0.03 }, at: later } },
    ]);
    spec.given([...allDone, ...events]).when({ type: 'CompleteRun', at: later }).then([]);
  });

  it('refuses to complete a run with work left, or one that is not claimed', () => {
    spec.given(running).when({ type: 'CompleteRun', at: later }).thenThrows('RUN_NOT_DONE', 'conflict');
    spec.given([requested]).when({ type: 'CompleteRun', at: later }).thenThrows('RUN_NOT_CLAIMED', 'conflict');
    spec.given(running).when({ type: 'CompleteRun', workerId: 'w2', at: later }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
  });

  it('fails a run for a reason the graph does not give, aborting what runs; again is a no-op', () => {
    const events = spec.given(running).when({ type: 'FailRun', reason: 'run timed out after 60000 ms', code: 'TIMEOUT', at: later }).events();
    expect(events).to.deep.equal([{ type: 'RunFailed', data: { code: 'TIMEOUT', reason: 'run timed out after 60000 ms', nodeId: null, usage: zero, at: later } }]);
    const state = spec.stateOf([...running, ...events]);
    expect(state.status).to.equal('failed');
    expect(state.nodes.a).to.deep.include({ status: 'failed', error: { code: 'ABORTED', message: 'the run ended while this node ran' } });
    spec.given([...running, ...events]).when({ type: 'FailRun', reason: 'again', at }).then([]);
  });

  it('fails a queued run too, with the default code and a node', () => {
    const [e] = spec.given([requested]).when({ type: 'FailRun', reason: 'flow version missing', nodeId: 'b', at }).events();
    expect(e.data).to.deep.include({ code: 'RUN_FAILED', nodeId: 'b' });
  });

  it('refuses to fail a completed run, for an unknown node, from a foreign worker, or an unknown run', () => {
    const done: RunEvent = { type: 'RunCompleted', data: { outputs: {}, outputsTruncated: false, usage: zero, at } };
    spec.given([requested, claimed, done]).when({ type: 'FailRun', reason: 'x', at }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given(running).when({ type: 'FailRun', reason: 'x', nodeId: 'zz', at }).thenThrows('NODE_NOT_FOUND', 'not_found');
    spec.given(running).when({ type: 'FailRun', reason: 'x', workerId: 'w2', at }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    spec.given([]).when({ type: 'FailRun', reason: 'x', at }).thenThrows('RUN_NOT_FOUND', 'not_found');
  });
});

describe('run decider: stopping', () => {
  it('stops a queued run at once', () => {
    const events = spec.given([requested]).when({ type: 'RequestStop', by: 'u1', at: later }).events();
    expect(events).to.deep.equal([
      { type: 'RunStopRequested', data: { by: 'u1', at: later } },
      { type: 'RunStopped', data: { usage: zero, at: later } },
    ]);
    expect(spec.stateOf([requested, ...events]).status).to.equal('stopped');
  });

  it('asks a worker with a node in flight to stop, then records its confirmation', () => {
    spec.given(running).when({ type: 'RequestStop', by: 'u1', at }).then([stopAsked]);
    expect(spec.given([...running, stopAsked]).when({ type: 'RequestStop', by: 'u2', at }).events(), 'asking twice').to.deep.equal([]);
    const events = spec.given([...running, stopAsked]).when({ type: 'ConfirmStop', workerId: 'w1', at: later }).events();
    expect(events).to.deep.equal([{ type: 'RunStopped', data: { usage: zero, at: later } }]);
    const state = spec.stateOf([...running, stopAsked, ...events]);
    expect(state).to.include({ status: 'stopped', finishedAt: later });
    expect(state.nodes.a.status).to.equal('failed');
    expect(state.nodes.a.error?.code).to.equal('ABORTED');
    expect(spec.given([...running, stopAsked, ...events]).when({ type: 'ConfirmStop', at }).events(), 'confirming twice').to.deep.equal([]);
  });

  it('stops at once when nothing is in flight, and when the last running node ends', () => {
    const between = [requested, claimed, started('a'), completed('a')];
    expect(types(spec.given(between).when({ type: 'RequestStop', by: null, at }).events())).to.deep.equal(['RunStopRequested', 'RunStopped']);
    const events = spec.given([...running, stopAsked]).when({ type: 'CompleteNode', workerId: 'w1', nodeId: 'a', output: 'late', executionTime: 1, at }).events();
    expect(types(events)).to.deep.equal(['NodeCompleted', 'RunStopped']);
  });

  it('refuses to stop a finished run, and to confirm a stop nobody asked for', () => {
    const done: RunEvent = { type: 'RunCompleted', data: { outputs: {}, outputsTruncated: false, usage: zero, at } };
    spec.given([requested, claimed, done]).when({ type: 'RequestStop', by: 'u1', at }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given([requested, claimed, done]).when({ type: 'ConfirmStop', at }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given(running).when({ type: 'ConfirmStop', at }).thenThrows('STOP_NOT_REQUESTED', 'conflict');
    spec.given([...running, stopAsked]).when({ type: 'ConfirmStop', workerId: 'w2', at }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    spec.given([]).when({ type: 'RequestStop', by: 'u1', at }).thenThrows('RUN_NOT_FOUND', 'not_found');
  });
});

describe('run decider: resuming after a worker crash', () => {
  const crashed = [requested, claimed, started('a'), completed('a'), started('b')];

  it('hands the run to a new worker; the interrupted node starts again with the next attempt', () => {
    const events = spec.given(crashed).when({ type: 'ResumeRun', workerId: 'w2', at: later }).events();
    expect(events).to.deep.equal([{ type: 'RunResumed', data: { workerId: 'w2', previousWorkerId: 'w1', interruptedNodeIds: ['b'], at: later } }]);
    const resumed = [...crashed, ...events];
    const state = spec.stateOf(resumed);
    expect(state).to.include({ status: 'running', workerId: 'w2', resumes: 1 });
    expect(state.nodes.a.status, 'completed work is kept').to.equal('completed');
    expect(state.nodes.b).to.include({ status: 'pending', attempts: 1 });
    expect(nextSteps(state.definition, state).ready).to.deep.equal(['b']);
    spec.given(resumed).when({ type: 'StartNode', workerId: 'w2', nodeId: 'b', at: later }).then([{ type: 'NodeStarted', data: { nodeId: 'b', attempt: 2, at: later } }]);
  });

  it('fences off the old worker once another took over', () => {
    const resumed = [...crashed, ...spec.given(crashed).when({ type: 'ResumeRun', workerId: 'w2', at: later }).events()];
    spec.given(resumed).when({ type: 'CompleteNode', workerId: 'w1', nodeId: 'b', output: 'stale', executionTime: 1, at: later }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    const again = [...resumed, started('b', 2)];
    spec.given(again).when({ type: 'CompleteNode', workerId: 'w2', nodeId: 'b', attempt: 1, output: 'stale', executionTime: 1, at: later }).thenThrows('STALE_ATTEMPT', 'conflict');
  });

  it('fails the run instead of restarting a node interrupted too often', () => {
    const third = [requested, claimed, started('a', MAX_NODE_ATTEMPTS)];
    const events = spec.given(third).when({ type: 'ResumeRun', workerId: 'w2', at: later }).events();
    expect(types(events)).to.deep.equal(['RunFailed']);
    expect(events[0].data).to.deep.include({ code: 'NODE_INTERRUPTED_TOO_OFTEN', nodeId: 'a' });
    expect(types(spec.given([requested, claimed, started('a', 1)]).when({ type: 'ResumeRun', workerId: 'w2', maxAttempts: 1, at }).events())).to.deep.equal(['RunFailed']);
  });

  it('just stops a run that was asked to stop', () => {
    spec.given([...crashed, stopAsked]).when({ type: 'ResumeRun', workerId: 'w2', at: later }).then([{ type: 'RunStopped', data: { usage: spec.stateOf(crashed).usage, at: later } }]);
  });

  it('refuses to resume a run never claimed, a finished one, an unknown one', () => {
    spec.given([requested]).when({ type: 'ResumeRun', workerId: 'w2', at }).thenThrows('RUN_NOT_CLAIMED', 'conflict');
    const failed: RunEvent = { type: 'RunFailed', data: { code: 'X', reason: 'x', nodeId: null, usage: zero, at } };
    spec.given([requested, claimed, failed]).when({ type: 'ResumeRun', workerId: 'w2', at }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given([]).when({ type: 'ResumeRun', workerId: 'w2', at }).thenThrows('RUN_NOT_FOUND', 'not_found');
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
    let log = spec.given([]).when(diamond).events();
    const exec = (command: RunCommand) => (log = [...log, ...spec.given(log).when(command).events()]);
    let rounds = 0;
    while (spec.stateOf(log).status === 'running' && rounds++ < 10) {
      const state = spec.stateOf(log);
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
    const final = spec.stateOf(log);
    expect(final.outputs).to.deep.equal({ result: 'out-d' });
    expect(final.usage.total_tokens).to.equal(4);
    expect(final.version).to.equal(log.length - 1);
  });
});
