import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import {
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_NODE_EVENT_BYTES,
  MAX_RUN_REQUEST_BYTES,
  foldRun,
  runDecider,
  runStreamId,
  type RequestRunCommand,
  type RunCommand,
  type RunEvent,
} from '../../domain/runs/index.js';
import { httpStatusOf } from '../../api/errors.js';

const at = '2026-04-01T00:00:00.000Z';
const later = '2026-04-01T00:00:05.000Z';

const given = (events: RunEvent[]) => foldRun(events);
/** Decides, and checks every produced event against its schema as the command handler does. */
function when(events: RunEvent[], command: RunCommand): RunEvent[] {
  const out = runDecider.decide(command, given(events));
  for (const e of out) {
    const parsed = runDecider.eventSchemas[e.type].safeParse(e.data);
    expect(parsed.success, `${e.type} matches its schema: ${parsed.error?.message}`).to.equal(true);
  }
  return out;
}
function expectRejected(fn: () => unknown, code: string, status: number): DomainError {
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

// The flow as FlowState holds it: positions, renderers and labels that a run does not need.
const flowNode = (id: string, data: Record<string, unknown> = {}) => ({ id, type: 'custom', position: { x: 1, y: 2 }, data: { nodeType: 'transform', template: `{{previous}}-${id}`, ...data } });
const flowEdge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target, label: 'shown on the canvas', sourceHandle: 'h' });
const request = (overrides: Partial<RequestRunCommand> = {}): RequestRunCommand => ({
  type: 'RequestRun',
  processId: 'p1',
  flowId: 'f1',
  flowVersion: 7,
  ownerId: 'u1',
  orgId: 'o1',
  workspaceId: 'w1',
  mode: 'flow',
  nodes: [flowNode('a'), flowNode('b')],
  edges: [flowEdge('a', 'b')],
  inputs: { text: 'hello' },
  async: true,
  requestedBy: 'u1',
  at,
  ...overrides,
});
const requested = when([], request())[0];
const claimed: RunEvent = { type: 'RunStarted', data: { workerId: 'w1', at } };
const startedA: RunEvent = { type: 'NodeStarted', data: { nodeId: 'a', attempt: 1, at } };
const complete = (nodeId: string, extra: Partial<Extract<RunCommand, { type: 'CompleteNode' }>> = {}): RunCommand => ({
  type: 'CompleteNode',
  workerId: 'w1',
  nodeId,
  output: `out-${nodeId}`,
  executionTime: 12,
  at: later,
  ...extra,
});
const fail = (nodeId: string, message = 'provider said no'): RunCommand => ({
  type: 'FailNode',
  workerId: 'w1',
  nodeId,
  error: { code: 'PROVIDER_ERROR', message, provider: 'openai' },
  executionTime: 3,
  at: later,
});

describe('run decider: RequestRun', () => {
  it('records the request with a snapshot of what execution needs, and defaults', () => {
    expect(requested).to.deep.equal({
      type: 'RunRequested',
      data: {
        processId: 'p1',
        flowId: 'f1',
        flowVersion: 7,
        ownerId: 'u1',
        orgId: 'o1',
        workspaceId: 'w1',
        mode: 'flow',
        nodeId: null,
        inputs: { text: 'hello' },
        async: true,
        requestedBy: 'u1',
        source: 'api',
        saveToHistory: false,
        overrideConfig: null,
        idempotencyKey: null,
        definition: {
          nodes: [
            { id: 'a', data: { nodeType: 'transform', template: '{{previous}}-a' } },
            { id: 'b', data: { nodeType: 'transform', template: '{{previous}}-b' } },
          ],
          edges: [{ id: 'a-b', source: 'a', target: 'b' }],
        },
        at,
      },
    });
    const state = given([requested]);
    expect(state.status).to.equal('queued');
    expect(state.nodes.a.status).to.equal('pending');
    expect(state.nodes.b.status).to.equal('pending');
    expect(runStreamId('p1')).to.equal('run-p1');
  });

  it('snapshots only the node of a single-node run, with its options', () => {
    const [e] = when([], request({ mode: 'node', nodeId: 'b', saveToHistory: true, overrideConfig: { temperature: 0.2 }, idempotencyKey: 'k1', source: 'trigger' }));
    expect(e.type).to.equal('RunRequested');
    const d = (e as Extract<RunEvent, { type: 'RunRequested' }>).data;
    expect(d.nodeId).to.equal('b');
    expect(d.definition).to.deep.equal({ nodes: [{ id: 'b', data: { nodeType: 'transform', template: '{{previous}}-b' } }], edges: [] });
    expect([d.saveToHistory, d.overrideConfig, d.idempotencyKey, d.source]).to.deep.equal([true, { temperature: 0.2 }, 'k1', 'trigger']);
  });

  it('claims at once for the process that runs it synchronously', () => {
    const events = when([], request({ claimBy: 'api-1' }));
    expect(types(events)).to.deep.equal(['RunRequested', 'RunStarted']);
    expect(given(events)).to.include({ status: 'running', workerId: 'api-1' });
  });

  it('keeps inputs as the store would give them back', () => {
    const [e] = when([], request({ inputs: { a: undefined, n: Number.NaN, ok: [1] } as never }));
    expect((e.data as { inputs: unknown }).inputs).to.deep.equal({ n: null, ok: [1] });
  });

  it('refuses a second request for the same process id', () => {
    expectRejected(() => when([requested], request()), 'RUN_ALREADY_EXISTS', 409);
  });

  it('refuses a single-node run of an unknown node, or without a node', () => {
    expectRejected(() => when([], request({ mode: 'node', nodeId: 'zz' })), 'NODE_NOT_FOUND', 404);
    const err = expectRejected(() => when([], request({ mode: 'node' })), 'VALIDATION_FAILED', 400);
    expect((err.details as { fields: Array<{ field: string }> }).fields[0].field).to.equal('nodeId');
  });

  it('refuses a flow without nodes', () => {
    expectRejected(() => when([], request({ nodes: [], edges: [] })), 'FLOW_HAS_NO_NODES', 400);
  });

  it('refuses invalid fields and values JSON cannot carry', () => {
    const err = expectRejected(() => when([], request({ flowVersion: -1 })), 'VALIDATION_FAILED', 400);
    expect((err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).to.deep.equal(['flowVersion']);
    expectRejected(() => when([], request({ inputs: { big: 1n } as never })), 'VALIDATION_FAILED', 400);
  });

  it('refuses a request that would not fit in one event (413)', () => {
    const err = expectRejected(() => when([], request({ inputs: { text: 'x'.repeat(MAX_RUN_REQUEST_BYTES) } })), 'LIMIT_EXCEEDED', 413);
    expect(err.details).to.include({ limit: 'runRequestBytes', max: MAX_RUN_REQUEST_BYTES });
  });
});

describe('run decider: ClaimRun', () => {
  it('lets a worker claim a queued run, and the same worker again without an event', () => {
    expect(when([requested], { type: 'ClaimRun', workerId: 'w1', at })).to.deep.equal([claimed]);
    expect(when([requested, claimed], { type: 'ClaimRun', workerId: 'w1', at })).to.deep.equal([]);
  });

  it('records the skips that follow at once from the start flags', () => {
    const flagged = when([], request({ nodes: [flowNode('a', { startNode: true }), flowNode('x')], edges: [] }))[0];
    const events = when([flagged], { type: 'ClaimRun', workerId: 'w1', at });
    expect(events).to.deep.equal([claimed, { type: 'NodeSkipped', data: { nodeId: 'x', reason: 'not reachable from a start node', at } }]);
  });

  it('refuses a run another worker holds, a finished run and an unknown run', () => {
    const err = expectRejected(() => when([requested, claimed], { type: 'ClaimRun', workerId: 'w2', at }), 'RUN_CLAIMED_BY_OTHER_WORKER', 409);
    expect(err.details).to.deep.equal({ workerId: 'w1' });
    const stopped: RunEvent[] = [requested, { type: 'RunStopRequested', data: { by: 'u1', at } }, { type: 'RunStopped', data: { usage: given([]).usage, at } }];
    expectRejected(() => when(stopped, { type: 'ClaimRun', workerId: 'w1', at }), 'RUN_ALREADY_FINISHED', 409);
    expectRejected(() => when([], { type: 'ClaimRun', workerId: 'w1', at }), 'RUN_NOT_FOUND', 404);
  });
});

describe('run decider: StartNode', () => {
  it('starts a ready node with attempt 1', () => {
    expect(when([requested, claimed], { type: 'StartNode', workerId: 'w1', nodeId: 'a', at })).to.deep.equal([startedA]);
    const state = given([requested, claimed, startedA]);
    expect(state.nodes.a).to.include({ status: 'running', attempts: 1, startedAt: at });
  });

  it('refuses a node that waits, one already running, and an unknown one', () => {
    const start = (nodeId: string): RunCommand => ({ type: 'StartNode', workerId: 'w1', nodeId, at });
    expect(expectRejected(() => when([requested, claimed], start('b')), 'NODE_NOT_READY', 409).details).to.deep.equal({ nodeId: 'b', status: 'pending' });
    expect(expectRejected(() => when([requested, claimed, startedA], start('a')), 'NODE_NOT_READY', 409).details).to.deep.equal({ nodeId: 'a', status: 'running' });
    expectRejected(() => when([requested, claimed], start('zz')), 'NODE_NOT_FOUND', 404);
  });

  it('refuses before a claim, from another worker, after a stop request, and once finished', () => {
    const start: RunCommand = { type: 'StartNode', workerId: 'w1', nodeId: 'a', at };
    expectRejected(() => when([requested], start), 'RUN_NOT_CLAIMED', 409);
    expectRejected(() => when([requested, claimed], { ...start, workerId: 'w2' }), 'RUN_CLAIMED_BY_OTHER_WORKER', 409);
    expectRejected(() => when([requested, claimed, startedA, { type: 'RunStopRequested', data: { by: null, at } }], { ...start, nodeId: 'b' }), 'RUN_STOP_REQUESTED', 409);
    const failedRun: RunEvent = { type: 'RunFailed', data: { code: 'TIMEOUT', reason: 'too slow', nodeId: null, usage: given([]).usage, at } };
    expectRejected(() => when([requested, claimed, failedRun], start), 'RUN_ALREADY_FINISHED', 409);
    expectRejected(() => when([], start), 'RUN_NOT_FOUND', 404);
  });
});

describe('run decider: CompleteNode', () => {
  const base = [requested, claimed, startedA];

  it('records the result with usage and condition results, and sums usage on the run', () => {
    const usage = { total_tokens: 30, prompt_tokens: 20, completion_tokens: 10, cost: 0.0015, cached_tokens: 5 };
    const conditionalResults = [{ condition: 'contains "x"', result: false, targetNodeId: null, index: 0 }];
    const events = when(base, complete('a', { usage, conditionalResults, metadata: { provider: 'offline', skip: undefined } }));
    expect(events).to.deep.equal([
      { type: 'NodeCompleted', data: { nodeId: 'a', attempt: 1, output: 'out-a', metadata: { provider: 'offline' }, conditionalResults, usage, executionTime: 12, at: later } },
    ]);
    const state = given([...base, ...events]);
    expect(state.nodes.a).to.include({ status: 'completed', output: 'out-a', executionTime: 12, finishedAt: later });
    expect(state.usage).to.deep.equal({ total_tokens: 30, prompt_tokens: 20, completion_tokens: 10, cost: 0.0015 });
  });

  it('completes the run in the same decision when the last node ends, with its outputs', () => {
    const afterA = [...base, ...when(base, complete('a', { usage: { total_tokens: 4, cost: 0.5 } }))];
    const startedB: RunEvent = { type: 'NodeStarted', data: { nodeId: 'b', attempt: 1, at } };
    const events = when([...afterA, startedB], complete('b', { output: { answer: 42 }, usage: { total_tokens: 6, cost: 0.25 } }));
    expect(types(events)).to.deep.equal(['NodeCompleted', 'RunCompleted']);
    expect(events[1].data).to.deep.equal({
      outputs: { b: { answer: 42 } },
      outputsTruncated: false,
      usage: { total_tokens: 10, prompt_tokens: 0, completion_tokens: 0, cost: 0.75 },
      at: later,
    });
    const state = given([...afterA, startedB, ...events]);
    expect(state).to.include({ status: 'completed', finishedAt: later });
    expect(state.outputs).to.deep.equal({ b: { answer: 42 } });
  });

  it('records an undefined output as null', () => {
    const [e] = when(base, complete('a', { output: undefined }));
    expect((e.data as { output: unknown }).output).to.equal(null);
  });

  it('refuses a node that is not running, a stale attempt and a foreign worker', () => {
    expect(expectRejected(() => when([requested, claimed], complete('a')), 'NODE_NOT_RUNNING', 409).details).to.deep.equal({ nodeId: 'a', status: 'pending' });
    expect(expectRejected(() => when(base, complete('a', { attempt: 2 })), 'STALE_ATTEMPT', 409).details).to.deep.equal({ nodeId: 'a', attempt: 1 });
    expect(when(base, complete('a', { attempt: 1 }))).to.have.length(1);
    expectRejected(() => when(base, complete('a', { workerId: 'w2' })), 'RUN_CLAIMED_BY_OTHER_WORKER', 409);
    expectRejected(() => when(base, complete('zz')), 'NODE_NOT_FOUND', 404);
  });

  it('refuses an output too big for one event (413), and invalid usage', () => {
    const err = expectRejected(() => when(base, complete('a', { output: 'x'.repeat(MAX_NODE_EVENT_BYTES) })), 'OUTPUT_TOO_LARGE', 413);
    expect(err.details).to.include({ nodeId: 'a', max: MAX_NODE_EVENT_BYTES });
    expectRejected(() => when(base, complete('a', { usage: { total_tokens: -1, cost: 0 } })), 'VALIDATION_FAILED', 400);
  });
});

describe('run decider: FailNode', () => {
  const base = [requested, claimed, startedA];

  it('records the failure and fails the run with it in the same decision', () => {
    const events = when(base, fail('a'));
    expect(events).to.deep.equal([
      { type: 'NodeFailed', data: { nodeId: 'a', attempt: 1, error: { code: 'PROVIDER_ERROR', message: 'provider said no', provider: 'openai' }, executionTime: 3, at: later } },
      {
        type: 'RunFailed',
        data: { code: 'NODE_FAILED', reason: 'node a failed: provider said no', nodeId: 'a', usage: { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 }, at: later },
      },
    ]);
    const state = given([...base, ...events]);
    expect(state.status).to.equal('failed');
    expect(state.failure).to.deep.equal({ code: 'NODE_FAILED', reason: 'node a failed: provider said no', nodeId: 'a' });
    expect(state.nodes.b.status).to.equal('pending');
  });

  it('goes on past a node with continueOnError, and cuts long messages', () => {
    const tolerant = when([], request({ nodes: [flowNode('a', { continueOnError: true }), flowNode('b')] }))[0];
    const events = when([tolerant, claimed, startedA], fail('a', 'm'.repeat(MAX_ERROR_MESSAGE_LENGTH + 50)));
    expect(types(events)).to.deep.equal(['NodeFailed']);
    expect((events[0].data as { error: { message: string } }).error.message).to.have.length(MAX_ERROR_MESSAGE_LENGTH);
    expect(runDecider.decide({ type: 'StartNode', workerId: 'w1', nodeId: 'b', at }, given([tolerant, claimed, startedA, ...events]))).to.have.length(1);
  });

  it('refuses a node that is not running', () => {
    expectRejected(() => when([requested, claimed], fail('a')), 'NODE_NOT_RUNNING', 409);
    expectRejected(() => when(base, { ...fail('a'), workerId: 'w9' } as RunCommand), 'RUN_CLAIMED_BY_OTHER_WORKER', 409);
  });
});

describe('run decider: SkipNodes', () => {
  // A log written without the automatic skips (an older writer, say): c routed nowhere, y and z left pending.
  const routed = when([], request({
    nodes: [flowNode('c', { conditions: [{ operator: 'contains', value: 'yes', targetNodeId: 'y' }] }), flowNode('y'), flowNode('z')],
    edges: [flowEdge('c', 'y'), flowEdge('y', 'z')],
  }))[0];
  const cDone: RunEvent[] = [
    { type: 'NodeStarted', data: { nodeId: 'c', attempt: 1, at } },
    { type: 'NodeCompleted', data: { nodeId: 'c', attempt: 1, output: 'no', metadata: {}, conditionalResults: [{ condition: 'contains "yes"', result: false, targetNodeId: 'y' }], usage: { total_tokens: 0, cost: 0 }, executionTime: 1, at } },
  ];

  it('records the skips asked for, what propagates from them, and the end of the run', () => {
    const events = when([routed, claimed, ...cDone], { type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'y', reason: 'condition false' }], at: later });
    expect(types(events)).to.deep.equal(['NodeSkipped', 'NodeSkipped', 'RunCompleted']);
    expect(events[0].data).to.deep.equal({ nodeId: 'y', reason: 'condition false', at: later });
    expect(events[1].data).to.include({ nodeId: 'z' });
    expect(when([routed, claimed, ...cDone, ...events.slice(0, 2)], { type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'y', reason: 'again' }], at })).to.deep.equal([]);
  });

  it('refuses to skip a node that may still run or already ran', () => {
    const err = expectRejected(() => when([routed, claimed], { type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'c', reason: 'no' }], at }), 'NODE_NOT_SKIPPABLE', 409);
    expect(err.details).to.deep.equal({ nodeId: 'c', status: 'pending' });
    expectRejected(() => when([routed, claimed, ...cDone], { type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'c', reason: 'no' }], at }), 'NODE_NOT_SKIPPABLE', 409);
  });
});
