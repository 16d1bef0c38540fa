import { expect } from 'chai';
import {
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_NODE_EVENT_BYTES,
  MAX_RUN_REQUEST_BYTES,
  runDecider,
  runStreamId,
  type RequestRunCommand,
  type RunCommand,
  type RunEvent,
} from '../../domain/runs/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(runDecider);
const at = '2026-04-01T00:00:00.000Z';
const later = '2026-04-01T00:00:05.000Z';

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
const requested = spec.given([]).when(request()).events()[0];
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
    const state = spec.stateOf([requested]);
    expect(state.status).to.equal('queued');
    expect(state.nodes.a.status).to.equal('pending');
    expect(state.nodes.b.status).to.equal('pending');
    expect(runStreamId('p1')).to.equal('run-p1');
  });

  it('snapshots only the node of a single-node run, with its options', () => {
    const [e] = spec.given([]).when(request({ mode: 'node', nodeId: 'b', saveToHistory: true, overrideConfig: { temperature: 0.2 }, idempotencyKey: 'k1', source: 'trigger' })).events();
    expect(e.type).to.equal('RunRequested');
    const d = (e as Extract<RunEvent, { type: 'RunRequested' }>).data;
    expect(d.nodeId).to.equal('b');
    expect(d.definition).to.deep.equal({ nodes: [{ id: 'b', data: { nodeType: 'transform', template: '{{previous}}-b' } }], edges: [] });
    expect([d.saveToHistory, d.overrideConfig, d.idempotencyKey, d.source]).to.deep.equal([true, { temperature: 0.2 }, 'k1', 'trigger']);
  });

  it('claims at once for the process that runs it synchronously', () => {
    const events = spec.given([]).when(request({ claimBy: 'api-1' })).events();
    expect(types(events)).to.deep.equal(['RunRequested', 'RunStarted']);
    expect(spec.stateOf(events)).to.include({ status: 'running', workerId: 'api-1' });
  });

  it('keeps inputs as the store would give them back', () => {
    const [e] = spec.given([]).when(request({ inputs: { a: undefined, n: Number.NaN, ok: [1] } as never })).events();
    expect((e.data as { inputs: unknown }).inputs).to.deep.equal({ n: null, ok: [1] });
  });

  it('refuses a second request for the same process id', () => {
    spec.given([requested]).when(request()).thenThrows('RUN_ALREADY_EXISTS', 'conflict');
  });

  it('refuses a single-node run of an unknown node, or without a node', () => {
    spec.given([]).when(request({ mode: 'node', nodeId: 'zz' })).thenThrows('NODE_NOT_FOUND', 'not_found');
    const err = spec.given([]).when(request({ mode: 'node' })).thenThrows('VALIDATION_FAILED', 'invalid');
    expect((err.details as { fields: Array<{ field: string }> }).fields[0].field).to.equal('nodeId');
  });

  it('refuses a flow without nodes', () => {
    spec.given([]).when(request({ nodes: [], edges: [] })).thenThrows('FLOW_HAS_NO_NODES', 'invalid');
  });

  it('refuses invalid fields and values JSON cannot carry', () => {
    const err = spec.given([]).when(request({ flowVersion: -1 })).thenThrows('VALIDATION_FAILED', 'invalid');
    expect((err.details as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).to.deep.equal(['flowVersion']);
    spec.given([]).when(request({ inputs: { big: 1n } as never })).thenThrows('VALIDATION_FAILED', 'invalid');
  });

  it('refuses a request that would not fit in one event (413)', () => {
    const err = spec.given([]).when(request({ inputs: { text: 'x'.repeat(MAX_RUN_REQUEST_BYTES) } })).thenThrows('LIMIT_EXCEEDED', 'too_large');
    expect(err.details).to.include({ limit: 'runRequestBytes', max: MAX_RUN_REQUEST_BYTES });
  });
});

describe('run decider: ClaimRun', () => {
  it('lets a worker claim a queued run, and the same worker again without an event', () => {
    spec.given([requested]).when({ type: 'ClaimRun', workerId: 'w1', at }).then([claimed]);
    spec.given([requested, claimed]).when({ type: 'ClaimRun', workerId: 'w1', at }).then([]);
  });

  it('records the skips that follow at once from the start flags', () => {
    const flagged = spec.given([]).when(request({ nodes: [flowNode('a', { startNode: true }), flowNode('x')], edges: [] })).events()[0];
    const events = spec.given([flagged]).when({ type: 'ClaimRun', workerId: 'w1', at }).events();
    expect(events).to.deep.equal([claimed, { type: 'NodeSkipped', data: { nodeId: 'x', reason: 'not reachable from a start node', at } }]);
  });

  it('refuses a run another worker holds, a finished run and an unknown run', () => {
    const err = spec.given([requested, claimed]).when({ type: 'ClaimRun', workerId: 'w2', at }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    expect(err.details).to.deep.equal({ workerId: 'w1' });
    const stopped: RunEvent[] = [requested, { type: 'RunStopRequested', data: { by: 'u1', at } }, { type: 'RunStopped', data: { usage: spec.stateOf([]).usage, at } }];
    spec.given(stopped).when({ type: 'ClaimRun', workerId: 'w1', at }).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given([]).when({ type: 'ClaimRun', workerId: 'w1', at }).thenThrows('RUN_NOT_FOUND', 'not_found');
  });
});

describe('run decider: StartNode', () => {
  it('starts a ready node with attempt 1', () => {
    spec.given([requested, claimed]).when({ type: 'StartNode', workerId: 'w1', nodeId: 'a', at }).then([startedA]);
    const state = spec.stateOf([requested, claimed, startedA]);
    expect(state.nodes.a).to.include({ status: 'running', attempts: 1, startedAt: at });
  });

  it('refuses a node that waits, one already running, and an unknown one', () => {
    const start = (nodeId: string): RunCommand => ({ type: 'StartNode', workerId: 'w1', nodeId, at });
    expect(spec.given([requested, claimed]).when(start('b')).thenThrows('NODE_NOT_READY', 'conflict').details).to.deep.equal({ nodeId: 'b', status: 'pending' });
    expect(spec.given([requested, claimed, startedA]).when(start('a')).thenThrows('NODE_NOT_READY', 'conflict').details).to.deep.equal({ nodeId: 'a', status: 'running' });
    spec.given([requested, claimed]).when(start('zz')).thenThrows('NODE_NOT_FOUND', 'not_found');
  });

  it('refuses before a claim, from another worker, after a stop request, and once finished', () => {
    const start: RunCommand = { type: 'StartNode', workerId: 'w1', nodeId: 'a', at };
    spec.given([requested]).when(start).thenThrows('RUN_NOT_CLAIMED', 'conflict');
    spec.given([requested, claimed]).when({ ...start, workerId: 'w2' }).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    spec.given([requested, claimed, startedA, { type: 'RunStopRequested', data: { by: null, at } }]).when({ ...start, nodeId: 'b' }).thenThrows('RUN_STOP_REQUESTED', 'conflict');
    const failedRun: RunEvent = { type: 'RunFailed', data: { code: 'TIMEOUT', reason: 'too slow', nodeId: null, usage: spec.stateOf([]).usage, at } };
    spec.given([requested, claimed, failedRun]).when(start).thenThrows('RUN_ALREADY_FINISHED', 'conflict');
    spec.given([]).when(start).thenThrows('RUN_NOT_FOUND', 'not_found');
  });
});

describe('run decider: CompleteNode', () => {
  const base = [requested, claimed, startedA];

  it('records the result with usage and condition results, and sums usage on the run', () => {
    const usage = { total_tokens: 30, prompt_tokens: 20, completion_tokens: 10, cost: 0.0015, cached_tokens: 5 };
    const conditionalResults = [{ condition: 'contains "x"', result: false, targetNodeId: null, index: 0 }];
    const events = spec.given(base).when(complete('a', { usage, conditionalResults, metadata: { provider: 'offline', skip: undefined } })).events();
    expect(events).to.deep.equal([
      { type: 'NodeCompleted', data: { nodeId: 'a', attempt: 1, output: 'out-a', metadata: { provider: 'offline' }, conditionalResults, usage, executionTime: 12, at: later } },
    ]);
    const state = spec.stateOf([...base, ...events]);
    expect(state.nodes.a).to.include({ status: 'completed', output: 'out-a', executionTime: 12, finishedAt: later });
    expect(state.usage).to.deep.equal({ total_tokens: 30, prompt_tokens: 20, completion_tokens: 10, cost: 0.0015 });
  });

  it('completes the run in the same decision when the last node ends, with its outputs', () => {
    const afterA = [...base, ...spec.given(base).when(complete('a', { usage: { total_tokens: 4, cost: 0.5 } })).events()];
    const startedB: RunEvent = { type: 'NodeStarted', data: { nodeId: 'b', attempt: 1, at } };
    const events = spec.given([...afterA, startedB]).when(complete('b', { output: { answer: 42 }, usage: { total_tokens: 6, cost: 0.25 } })).events();
    expect(types(events)).to.deep.equal(['NodeCompleted', 'RunCompleted']);
    expect(events[1].data).to.deep.equal({
      outputs: { b: { answer: 42 } },
      outputsTruncated: false,
      usage: { total_tokens: 10, prompt_tokens: 0, completion_tokens: 0, cost: 0.75 },
      at: later,
    });
    const state = spec.stateOf([...afterA, startedB, ...events]);
    expect(state).to.include({ status: 'completed', finishedAt: later });
    expect(state.outputs).to.deep.equal({ b: { answer: 42 } });
  });

  it('records an undefined output as null', () => {
    const [e] = spec.given(base).when(complete('a', { output: undefined })).events();
    expect((e.data as { output: unknown }).output).to.equal(null);
  });

  it('refuses a node that is not running, a stale attempt and a foreign worker', () => {
    expect(spec.given([requested, claimed]).when(complete('a')).thenThrows('NODE_NOT_RUNNING', 'conflict').details).to.deep.equal({ nodeId: 'a', status: 'pending' });
    expect(spec.given(base).when(complete('a', { attempt: 2 })).thenThrows('STALE_ATTEMPT', 'conflict').details).to.deep.equal({ nodeId: 'a', attempt: 1 });
    expect(spec.given(base).when(complete('a', { attempt: 1 })).events()).to.have.length(1);
    spec.given(base).when(complete('a', { workerId: 'w2' })).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
    spec.given(base).when(complete('zz')).thenThrows('NODE_NOT_FOUND', 'not_found');
  });

  it('refuses an output too big for one event (413), and invalid usage', () => {
    const err = spec.given(base).when(complete('a', { output: 'x'.repeat(MAX_NODE_EVENT_BYTES) })).thenThrows('OUTPUT_TOO_LARGE', 'too_large');
    expect(err.details).to.include({ nodeId: 'a', max: MAX_NODE_EVENT_BYTES });
    spec.given(base).when(complete('a', { usage: { total_tokens: -1, cost: 0 } })).thenThrows('VALIDATION_FAILED', 'invalid');
  });
});

describe('run decider: FailNode', () => {
  const base = [requested, claimed, startedA];

  it('records the failure and fails the run with it in the same decision', () => {
    const events = spec.given(base).when(fail('a')).events();
    expect(events).to.deep.equal([
      { type: 'NodeFailed', data: { nodeId: 'a', attempt: 1, error: { code: 'PROVIDER_ERROR', message: 'provider said no', provider: 'openai' }, executionTime: 3, at: later } },
      {
        type: 'RunFailed',
        data: { code: 'NODE_FAILED', reason: 'node a failed: provider said no', nodeId: 'a', usage: { total_tokens: 0, prompt_tokens: 0, completion_tokens: 0, cost: 0 }, at: later },
      },
    ]);
    const state = spec.stateOf([...base, ...events]);
    expect(state.status).to.equal('failed');
    expect(state.failure).to.deep.equal({ code: 'NODE_FAILED', reason: 'node a failed: provider said no', nodeId: 'a' });
    expect(state.nodes.b.status).to.equal('pending');
  });

  it('goes on past a node with continueOnError, and cuts long messages', () => {
    const tolerant = spec.given([]).when(request({ nodes: [flowNode('a', { continueOnError: true }), flowNode('b')] })).events()[0];
    const events = spec.given([tolerant, claimed, startedA]).when(fail('a', 'm'.repeat(MAX_ERROR_MESSAGE_LENGTH + 50))).events();
    expect(types(events)).to.deep.equal(['NodeFailed']);
    expect((events[0].data as { error: { message: string } }).error.message).to.have.length(MAX_ERROR_MESSAGE_LENGTH);
    expect(runDecider.decide({ type: 'StartNode', workerId: 'w1', nodeId: 'b', at }, spec.stateOf([tolerant, claimed, startedA, ...events]))).to.have.length(1);
  });

  it('refuses a node that is not running', () => {
    spec.given([requested, claimed]).when(fail('a')).thenThrows('NODE_NOT_RUNNING', 'conflict');
    spec.given(base).when({ ...fail('a'), workerId: 'w9' } as RunCommand).thenThrows('RUN_CLAIMED_BY_OTHER_WORKER', 'conflict');
  });
});

describe('run decider: SkipNodes', () => {
  // A log written without the automatic skips (an older writer, say): c routed nowhere, y and z left pending.
  const routed = spec.given([]).when(request({
    nodes: [flowNode('c', { conditions: [{ operator: 'contains', value: 'yes', targetNodeId: 'y' }] }), flowNode('y'), flowNode('z')],
    edges: [flowEdge('c', 'y'), flowEdge('y', 'z')],
  })).events()[0];
  const cDone: RunEvent[] = [
    { type: 'NodeStarted', data: { nodeId: 'c', attempt: 1, at } },
    { type: 'NodeCompleted', data: { nodeId: 'c', attempt: 1, output: 'no', metadata: {}, conditionalResults: [{ condition: 'contains "yes"', result: false, targetNodeId: 'y' }], usage: { total_tokens: 0, cost: 0 }, executionTime: 1, at } },
  ];

  it('records the skips asked for, what propagates from them, and the end of the run', () => {
    const events = spec.given([routed, claimed, ...cDone]).when({ type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'y', reason: 'condition false' }], at: later }).events();
    expect(types(events)).to.deep.equal(['NodeSkipped', 'NodeSkipped', 'RunCompleted']);
    expect(events[0].data).to.deep.equal({ nodeId: 'y', reason: 'condition false', at: later });
    expect(events[1].data).to.include({ nodeId: 'z' });
    spec.given([routed, claimed, ...cDone, ...events.slice(0, 2)]).when({ type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'y', reason: 'again' }], at }).then([]);
  });

  it('refuses to skip a node that may still run or already ran', () => {
    const err = spec.given([routed, claimed]).when({ type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'c', reason: 'no' }], at }).thenThrows('NODE_NOT_SKIPPABLE', 'conflict');
    expect(err.details).to.deep.equal({ nodeId: 'c', status: 'pending' });
    spec.given([routed, claimed, ...cDone]).when({ type: 'SkipNodes', workerId: 'w1', skips: [{ nodeId: 'c', reason: 'no' }], at }).thenThrows('NODE_NOT_SKIPPABLE', 'conflict');
  });
});
