import { expect } from 'chai';
import {
  answerQuery,
  workflowDecider,
  type CreateWorkflowCommand,
  type WorkflowEvent,
} from '../../domain/workflows/index.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(workflowDecider);
const t0 = '2026-03-01T00:00:00.000Z';
const t1 = '2026-03-01T00:00:01.000Z';
const t5 = '2026-03-01T00:00:05.000Z';

const nodes = [
  { id: 'a', data: { nodeType: 'set_state', values: { stage: 'started', who: '{{inputs.name}}' } } },
  { id: 'w', data: { nodeType: 'wait_signal', signalName: 'approve' } },
  { id: 's', data: { nodeType: 'sleep', durationMs: 2000 } },
  { id: 'x', data: { nodeType: 'transform', template: 'done {{previous}}' } },
];
const chain = (ids: string[]) => ids.slice(1).map((id, i) => ({ id: `e${i}`, source: ids[i], target: id }));

const create = (over: Partial<CreateWorkflowCommand> = {}): CreateWorkflowCommand => ({
  type: 'CreateWorkflow', workflowId: 'wf1', flowId: 'f1', flowVersion: 3, ownerId: 'u1', orgId: null, workspaceId: null, createdBy: 'u1',
  nodes, edges: chain(['a', 'w', 's', 'x']), input: { name: 'Ada' }, start: true, idempotencyPolicy: 'allow_duplicate', searchAttributes: { team: 'red' }, memo: {}, at: t0, ...over,
});
const started = (over: Partial<CreateWorkflowCommand> = {}) => spec.given([]).when(create(over)).events();
const types = (events: WorkflowEvent[]) => events.map((e) => e.type);

describe('workflow decider', () => {
  it('creating with start runs set_state at once and waits on the signal', () => {
    const events = started();
    expect(types(events)).to.deep.equal(['WorkflowCreated', 'WorkflowStarted', 'WorkflowNodeStarted', 'WorkflowStateSet', 'WorkflowNodeCompleted', 'WorkflowNodeStarted']);
    const state = spec.stateOf(events);
    expect(state.status).to.equal('RUNNING');
    expect(state.state).to.deep.equal({ stage: 'started', who: 'Ada' });
    expect(state.exec.nodes.w.status).to.equal('running');
  });

  it('a query node completes at once passing nothing on; set_state templates read {{state.x}}', () => {
    const withQuery = [
      { id: 'q', data: { nodeType: 'query', queryName: 'progress', result: '{{state.stage}}' } },
      { id: 'a', data: { nodeType: 'set_state', values: { stage: 'one' } } },
      { id: 'b', data: { nodeType: 'set_state', values: { stage: '{{state.stage}} two' } } },
      { id: 'w', data: { nodeType: 'wait_signal', signalName: 'go' } },
    ];
    const events = started({ nodes: withQuery, edges: chain(['a', 'b', 'w']) });
    const state = spec.stateOf(events);
    expect(state.exec.nodes.q).to.deep.include({ status: 'completed', output: null });
    expect(state.state).to.deep.equal({ stage: 'one two' });
    expect(state.status).to.equal('RUNNING');
    expect(answerQuery(state, 'progress')).to.deep.equal({ found: true, result: 'one two' });
    expect(answerQuery(state, 'stage')).to.deep.equal({ found: true, result: 'one two' });
    expect(answerQuery(state, 'nothing').found).to.equal(false);
  });

  it('start: false creates a CREATED workflow; the __start signal starts it', () => {
    const created = spec.given([]).when(create({ start: false })).events();
    expect(types(created)).to.deep.equal(['WorkflowCreated']);
    expect(spec.stateOf(created).status).to.equal('CREATED');
    const start = spec.given(created).when({ type: 'SignalWorkflow', signalId: 'g1', name: '__start', payload: null, requestId: null, by: 'u1', at: t1 }).events();
    expect(start[0].type).to.equal('WorkflowStarted');
  });

  it('a workflow id that is open is WORKFLOW_ALREADY_STARTED; policies decide about closed ones', () => {
    const events = started();
    spec.given(events).when(create()).thenThrows('WORKFLOW_ALREADY_STARTED', 'conflict');
    const terminated = [...events, ...spec.given(events).when({ type: 'CancelWorkflow', by: 'u1', reason: 'stop', terminate: true, at: t1 }).events()];
    spec.given(terminated).when(create({ idempotencyPolicy: 'reject_duplicate' })).thenThrows('WORKFLOW_ALREADY_STARTED');
    const again = spec.given(terminated).when(create({ idempotencyPolicy: 'allow_duplicate_failed_only', at: t5 })).events();
    expect(again[0]).to.deep.include({ type: 'WorkflowCreated' });
    expect((again[0].data as { execution: number }).execution).to.equal(2);
  });

  it('a signal completes the waiting node with its payload, then the sleep schedules a durable timer', () => {
    const events = started();
    const after = spec.given(events).when({ type: 'SignalWorkflow', signalId: 'g1', name: 'approve', payload: { ok: true }, requestId: 'r1', by: 'u1', at: t1 }).events();
    expect(types(after)).to.deep.equal(['SignalReceived', 'SignalDelivered', 'WorkflowNodeCompleted', 'WorkflowNodeStarted', 'TimerScheduled']);
    const state = spec.stateOf([...events, ...after]);
    expect(state.exec.nodes.w.output).to.deep.equal({ ok: true });
    expect(state.timers['sleep:s:1']).to.deep.include({ fireAt: '2026-03-01T00:00:03.000Z', status: 'pending', kind: 'sleep' });
    // The same requestId is not recorded twice.
    spec.given([...events, ...after]).when({ type: 'SignalWorkflow', signalId: 'g2', name: 'approve', payload: 1, requestId: 'r1', by: 'u1', at: t1 }).then([]);
  });

  it('signals wait in order until a node asks for them', () => {
    const events = spec.given([]).when(create({ nodes: [nodes[1]], edges: [] , start: false})).events();
    const s1 = spec.given(events).when({ type: 'SignalWorkflow', signalId: 'g1', name: 'approve', payload: 'first', requestId: null, by: null, at: t0 }).events();
    const s2 = spec.given([...events, ...s1]).when({ type: 'SignalWorkflow', signalId: 'g2', name: 'approve', payload: 'second', requestId: null, by: null, at: t0 }).events();
    const all = [...events, ...s1, ...s2];
    expect(spec.stateOf(all).pendingSignals.map((p) => p.payload)).to.deep.equal(['first', 'second']);
    const run = spec.given(all).when({ type: 'ResumeWorkflow', by: null, reason: null, at: t1 }).events();
    const state = spec.stateOf([...all, ...run]);
    expect(state.status).to.equal('COMPLETED');
    expect(state.result).to.equal('first');
    expect(state.pendingSignals.map((p) => p.payload)).to.deep.equal(['second']);
  });

  it('a timer fires once, only when due; the sleeping node completes and the worker node becomes ready', () => {
    const events = started();
    const signaled = [...events, ...spec.given(events).when({ type: 'SignalWorkflow', signalId: 'g1', name: 'approve', payload: 'yes', requestId: null, by: null, at: t1 }).events()];
    spec.given(signaled).when({ type: 'FireTimer', timerId: 'sleep:s:1', at: t1 }).then([]);
    const fired = spec.given(signaled).when({ type: 'FireTimer', timerId: 'sleep:s:1', at: t5 }).events();
    expect(types(fired)).to.deep.equal(['TimerFired', 'WorkflowNodeCompleted']);
    expect((fired[0].data as { lateMs: number }).lateMs).to.equal(2000);
    const all = [...signaled, ...fired];
    spec.given(all).when({ type: 'FireTimer', timerId: 'sleep:s:1', at: t5 }).then([]);
    const node = spec.given(all).when({ type: 'StartNode', nodeId: 'x', workerId: 'w1', at: t5 }).events();
    expect(node).to.deep.equal([{ type: 'WorkflowNodeStarted', data: { nodeId: 'x', attempt: 1, workerId: 'w1', at: t5 } }]);
    const done = spec.given([...all, ...node]).when({ type: 'CompleteNode', nodeId: 'x', attempt: 1, output: 'done', executionTime: 3, at: t5 }).events();
    expect(types(done)).to.deep.equal(['WorkflowNodeCompleted', 'WorkflowCompleted']);
    expect(spec.stateOf([...all, ...node, ...done])).to.deep.include({ status: 'COMPLETED', result: 'done' });
  });

  it('pause stops starts and holds timers until resume, which fires the due ones', () => {
    const events = started();
    const signaled = [...events, ...spec.given(events).when({ type: 'SignalWorkflow', signalId: 'g1', name: 'approve', payload: 'yes', requestId: null, by: null, at: t1 }).events()];
    const paused = [...signaled, ...spec.given(signaled).when({ type: 'PauseWorkflow', by: 'u1', reason: 'look', at: t1 }).events()];
    spec.given(paused).when({ type: 'PauseWorkflow', by: 'u1', reason: null, at: t1 }).thenThrows('WORKFLOW_NOT_RUNNING', 'conflict');
    spec.given(paused).when({ type: 'FireTimer', timerId: 'sleep:s:1', at: t5 }).then([]);
    const resumed = spec.given(paused).when({ type: 'ResumeWorkflow', by: 'u1', reason: 'ok', at: t5 }).events();
    expect(types(resumed)).to.deep.equal(['WorkflowResumed', 'TimerFired', 'WorkflowNodeCompleted']);
    const state = spec.stateOf([...paused, ...resumed]);
    expect(state.controls.map((c) => c.action)).to.deep.equal(['start', 'pause', 'resume']);
    spec.given([...paused, ...resumed]).when({ type: 'ResumeWorkflow', by: 'u1', reason: null, at: t5 }).thenThrows('WORKFLOW_NOT_PAUSED');
  });

  it('cancel waits for in-flight worker nodes, then ends CANCELED with pending timers canceled; terminate is at once', () => {
    const flow = { nodes: [nodes[3], { id: 'y', data: { nodeType: 'transform', template: 'y' } }], edges: chain(['x', 'y']) };
    const events = spec.given([]).when(create(flow)).events();
    const withNode = [...events, ...spec.given(events).when({ type: 'StartNode', nodeId: 'x', workerId: 'w1', at: t0 }).events()];
    const timer = [...withNode, ...spec.given(withNode).when({ type: 'ScheduleTimer', timerId: 't1', name: 'remind', fireAt: t5, signal: null, at: t0 }).events()];
    const requested = spec.given(timer).when({ type: 'CancelWorkflow', by: 'u1', reason: 'enough', terminate: false, at: t1 }).events();
    expect(types(requested)).to.deep.equal(['WorkflowCancelRequested']);
    const after = [...timer, ...requested];
    spec.given(after).when({ type: 'StartNode', nodeId: 'y', workerId: 'w1', at: t1 }).thenThrows('WORKFLOW_CANCEL_REQUESTED');
    const aborted = spec.given(after).when({ type: 'FailNode', nodeId: 'x', attempt: 1, error: { code: 'ABORTED', message: 'canceled' }, executionTime: 5, at: t1 }).events();
    expect(types(aborted)).to.deep.equal(['WorkflowNodeFailed', 'WorkflowCanceled']);
    const state = spec.stateOf([...after, ...aborted]);
    expect(state.status).to.equal('CANCELED');
    expect(state.timers.t1.status).to.equal('canceled');
    spec.given([...after, ...aborted]).when({ type: 'SignalWorkflow', signalId: 'g', name: 'x', payload: null, requestId: null, by: null, at: t5 }).thenThrows('WORKFLOW_CLOSED', 'conflict');
    expect(types(spec.given(timer).when({ type: 'CancelWorkflow', by: 'u1', reason: null, terminate: true, at: t1 }).events())).to.deep.equal(['WorkflowTerminated']);
  });

  it('user timers deliver their signal; a fired timer cannot be canceled', () => {
    const events = spec.given([]).when(create({ nodes: [nodes[1]], edges: [] })).events();
    const scheduled = [...events, ...spec.given(events).when({ type: 'ScheduleTimer', timerId: 't1', name: 'nudge', fireAt: t1, signal: { name: 'approve', payload: 'by timer' }, at: t0 }).events()];
    const fired = spec.given(scheduled).when({ type: 'FireTimer', timerId: 't1', at: t1 }).events();
    expect(types(fired)).to.deep.equal(['TimerFired', 'SignalReceived', 'SignalDelivered', 'WorkflowNodeCompleted', 'WorkflowCompleted']);
    spec.given([...scheduled, ...fired]).when({ type: 'CancelTimer', timerId: 't1', at: t5 }).thenThrows('TIMER_ALREADY_FIRED', 'conflict');
    spec.given(scheduled).when({ type: 'CancelTimer', timerId: 'nope', at: t5 }).thenThrows('WORKFLOW_TIMER_NOT_FOUND', 'not_found');
  });

  it('a wait_signal with timeoutMs fails with SIGNAL_TIMEOUT when its timer fires first', () => {
    const events = spec.given([]).when(create({ nodes: [{ id: 'w', data: { nodeType: 'wait_signal', signalName: 'approve', timeoutMs: 1000 } }], edges: [] })).events();
    expect(spec.stateOf(events).timers['signal_timeout:w:1'].fireAt).to.equal(t1);
    const fired = spec.given(events).when({ type: 'FireTimer', timerId: 'signal_timeout:w:1', at: t1 }).events();
    expect(types(fired)).to.deep.equal(['TimerFired', 'WorkflowNodeFailed', 'WorkflowFailed']);
    expect(spec.stateOf([...events, ...fired]).error).to.deep.include({ code: 'NODE_FAILED', nodeId: 'w' });
  });

  it('a worker judged dead: its nodes start again, up to three attempts', () => {
    const flow = { nodes: [nodes[3]], edges: [] };
    let events = spec.given([]).when(create(flow)).events();
    for (let i = 1; i <= 3; i++) {
      events = [...events, ...spec.given(events).when({ type: 'StartNode', nodeId: 'x', workerId: `w${i}`, at: t0 }).events()];
      if (i < 3) events = [...events, ...spec.given(events).when({ type: 'InterruptNodes', previousWorkerId: `w${i}`, at: t0 }).events()];
    }
    expect(spec.stateOf(events).exec.nodes.x.attempts).to.equal(3);
    const failed = spec.given(events).when({ type: 'InterruptNodes', previousWorkerId: 'w3', at: t1 }).events();
    expect(failed[0]).to.deep.include({ type: 'WorkflowFailed' });
  });

  it('continue-as-new closes the execution naming the new one; an execution timeout ends it TIMED_OUT', () => {
    const events = started();
    const closed = spec.given(events).when({ type: 'ContinueAsNew', newWorkflowId: 'wf2', by: 'u1', at: t1 }).events();
    expect(spec.stateOf([...events, ...closed])).to.deep.include({ status: 'COMPLETED', continuedAs: 'wf2' });
    const timed = spec.given([]).when(create({ executionTimeoutMs: 1000 })).events();
    const out = spec.given(timed).when({ type: 'FireTimer', timerId: 'execution_timeout:1', at: t1 }).events();
    expect(types(out)).to.deep.equal(['TimerFired', 'WorkflowTimedOut']);
    expect(spec.stateOf([...timed, ...out]).status).to.equal('TIMED_OUT');
  });

  it('commands to a missing workflow are WORKFLOW_NOT_FOUND; a flow without nodes cannot start', () => {
    spec.given([]).when({ type: 'PauseWorkflow', by: null, reason: null, at: t0 }).thenThrows('WORKFLOW_NOT_FOUND', 'not_found');
    spec.given([]).when(create({ nodes: [], edges: [] })).thenThrows('FLOW_HAS_NO_NODES', 'invalid');
  });
});
