import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { flushPending, handleCommand, pendingStream, type CommandContext } from '../../commands/handle.js';
import { executeRun, RunExecutions, runsLocally, type RunEnginePorts } from '../../consumers/runs-executor.js';
import { nodeKindsFor, type NodeKindPorts } from '../../consumers/runs-kinds/index.js';
import { runDecider, runStreamId, type RunNode } from '../../domain/runs/index.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { EventStore } from '../../ports/event-store.js';
import type { LlmProvider } from '../../ports/llm.js';

/**
 * The run executor's per-node writes (issue 18): a node that runs only in this process and finishes
 * within the tick it started in records its start and its end in ONE append; a node that reaches
 * outside (a paid provider, a webhook) has its start durable before it runs.
 */
describe('run executor: appends per node', () => {
  const kinds = nodeKindsFor({} as NodeKindPorts);
  const node = (data: Record<string, unknown>): RunNode => ({ id: 'n', data: data as RunNode['data'] });

  const local = (data: Record<string, unknown>) => runsLocally(kinds, node(data), node(data).data);

  it('runsLocally: pure kinds and the offline provider run locally; providers, webhooks and prompt conditions on them do not', () => {
    expect(local({ nodeType: 'transform', template: 'x' })).to.equal(true);
    expect(local({ nodeType: 'delay', delayMs: 5 })).to.equal(true);
    expect(local({})).to.equal(true); // the pass-through fallback
    expect(local({ nodeType: 'llm', llm: 'offline', prompt: 'p' })).to.equal(true);
    expect(local({ llm: 'offline', prompt: 'p' })).to.equal(true); // seed-style node: llm by its data
    expect(local({ nodeType: 'llm', llm: 'openai', model: 'm', prompt: 'p' })).to.equal(false);
    expect(local({ llm: 'anthropic', prompt: 'p' })).to.equal(false);
    expect(local({ nodeType: 'webhook', webhookConfig: { url: 'https://example.com' } })).to.equal(false);
    expect(local({ webhookConfig: { url: 'https://example.com' } })).to.equal(false);
    expect(local({ nodeType: 'mcp_tool' })).to.equal(false);
    expect(local({ nodeType: 'memory' })).to.equal(false);
    const askingOpenAi = { nodeType: 'transform', template: 'x', llm: 'openai', conditions: [{ usePrompt: true, prompt: 'yes?', targetNodeId: null }] };
    expect(local(askingOpenAi)).to.equal(false);
    const askingOffline = { ...askingOpenAi, llm: 'offline' };
    expect(local(askingOffline)).to.equal(true);
  });

  let raw: SqliteEventStore;
  let appends: string[][];
  let store: EventStore;
  /** Whether NodeStarted of `n` was in the log when the provider was called. */
  let startDurableAtCall: boolean | null;

  beforeEach(() => {
    raw = new SqliteEventStore(':memory:');
    appends = [];
    startDurableAtCall = null;
    store = {
      ...raw,
      adapter: raw.adapter,
      append: async (streamId, events, expected) => {
        const result = await raw.append(streamId, events, expected);
        if (streamId.startsWith('run-')) appends.push(events.map((e) => e.type));
        return result;
      },
      readStream: (streamId, options) => raw.readStream(streamId, options),
      readAll: (options) => raw.readAll(options),
      subscribe: (options) => raw.subscribe(options),
      headPosition: () => raw.headPosition(),
      stats: () => raw.stats(),
      health: () => raw.health(),
      close: () => raw.close(),
    } as EventStore;
  });
  afterEach(() => raw.close());

  const fakeProvider = (processId: string): LlmProvider =>
    ({
      id: 'openai',
      async complete() {
        const events = await raw.readStream(runStreamId(processId));
        startDurableAtCall = events.some((e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === 'ask');
        return { text: 'answer', usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0, cacheWriteTokens: 0, totalTokens: 2 }, cost: 0, priced: true, model: 'm', provider: 'openai', finishReason: 'stop' };
      },
    }) as unknown as LlmProvider;

  /** `held`: requested and claimed the way a sync run is (startRun): nothing appended until the executor appends it. */
  async function run(nodes: Array<{ id: string; data: Record<string, unknown> }>, options: { held?: boolean } = {}) {
    const processId = randomUUID();
    const pending = options.held ? pendingStream(runStreamId(processId), runDecider) : undefined;
    const workerId = 'worker-1';
    const now = () => new Date();
    const context: CommandContext = { actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: now() };
    const edges = nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: n.id }));
    await handleCommand(store, {
      streamId: runStreamId(processId),
      decider: runDecider,
      command: {
        type: 'RequestRun', processId, flowId: 'f1', flowVersion: 0, ownerId: 'u1', orgId: null, workspaceId: null, mode: 'flow', nodes, edges,
        inputs: { topic: 't' }, async: false, requestedBy: 'u1', claimBy: workerId, at: context.now.toISOString(),
      },
      context,
      pending,
    });
    if (pending) expect(await raw.readStream(runStreamId(processId)), 'nothing appended by the request').to.deep.equal([]);
    const ports = {
      eventStore: store,
      clock: { now },
      newId: randomUUID,
      logger: { debug() {}, info() {}, warn() {}, error() {}, child() { return this; } },
      settings: { NODE_TIMEOUT_MS: 10_000, RUN_TIMEOUT_MS: 60_000, RUN_CONCURRENCY: 4 },
      secrets: { open: () => { throw new Error('no secrets here'); } },
      llm: { providerFor: async () => fakeProvider(processId) },
      executions: new RunExecutions(),
    } as unknown as RunEnginePorts;
    const state = await executeRun(ports, processId, workerId, pending);
    if (pending) expect(pending.flushed, 'appended by the executor').to.equal(true);
    return { state, events: await raw.readStream(runStreamId(processId)) };
  }

  it('a local node finished within its tick: start and end in one append; a delay records its start at the next turn', async () => {
    const { state, events } = await run([
      { id: 'a', data: { nodeType: 'transform', template: 'A {{inputs.topic}}' } },
      { id: 'b', data: { nodeType: 'delay', delayMs: 30 } },
      { id: 'c', data: { nodeType: 'transform', template: 'C {{previous}}' } },
    ]);
    expect(state.status).to.equal('completed');
    expect(appends).to.deep.equal([
      ['RunRequested', 'RunStarted'],
      ['NodeStarted', 'NodeCompleted'],
      ['NodeStarted'],
      ['NodeCompleted'],
      ['NodeStarted', 'NodeCompleted', 'RunCompleted'],
    ]);
    // Still two events per node, in order, with the node's start time before its end time.
    const a = events.filter((e) => (e.data as { nodeId?: string }).nodeId === 'a');
    expect(a.map((e) => e.type)).to.deep.equal(['NodeStarted', 'NodeCompleted']);
    expect((a[0]!.data as { attempt: number }).attempt).to.equal(1);
    expect((a[1]!.data as { attempt: number }).attempt).to.equal(1);
    expect((a[0]!.data as { at: string }).at <= (a[1]!.data as { at: string }).at).to.equal(true);
    expect(state.nodes.c!.output).to.equal('C A t');
  });

  it('a node that reaches a provider has its start durable before the call', async () => {
    const { state } = await run([
      { id: 'a', data: { nodeType: 'transform', template: 'A' } },
      { id: 'ask', data: { nodeType: 'llm', llm: 'openai', model: 'm', prompt: 'hi {{previous}}' } },
    ]);
    expect(state.status, JSON.stringify(state.failure)).to.equal('completed');
    expect(startDurableAtCall).to.equal(true);
    expect(appends).to.deep.equal([['RunRequested', 'RunStarted'], ['NodeStarted', 'NodeCompleted'], ['NodeStarted'], ['NodeCompleted', 'RunCompleted']]);
  });

  it('a local node that fails within its tick records its start and its failure together', async () => {
    const { state, events } = await run([{ id: 'x', data: { nodeType: 'transform', template: 'x', conditions: [{ operator: 'bogus', value: 'x', targetNodeId: null }] } }]);
    expect(state.status).to.equal('failed');
    expect(appends[1]!.slice(0, 2)).to.deep.equal(['NodeStarted', 'NodeFailed']);
    const failed = events.find((e) => e.type === 'NodeFailed')!;
    expect(failed.data).to.deep.include({ nodeId: 'x', attempt: 1 });
    expect((failed.data as { error: { code: string } }).error.code).to.equal('CONDITION_INVALID');
  });

  describe('a sync run held by the process that requested it (one append for an in-process run)', () => {
    const twoLocal = [
      { id: 'a', data: { nodeType: 'transform', template: 'A {{inputs.topic}}' } },
      { id: 'c', data: { nodeType: 'transform', template: 'C {{previous}}' } },
    ];
    const shape = (events: Array<{ type: string; data: unknown; metadata: { actorId: string | null } }>) =>
      events.map((e) => ({ type: e.type, nodeId: (e.data as { nodeId?: string }).nodeId ?? null, actorId: e.metadata.actorId }));

    it('local nodes only: the whole run is ONE append, with the same events in the same order and each its own metadata', async () => {
      const plain = await run(twoLocal);
      appends = [];
      const held = await run(twoLocal, { held: true });
      expect(held.state.status).to.equal('completed');
      expect(held.state.nodes.c!.output).to.equal('C A t');
      expect(appends).to.deep.equal([['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'NodeStarted', 'NodeCompleted', 'RunCompleted']]);
      expect(shape(held.events)).to.deep.equal(shape(plain.events));
      // The request's events carry the requester, the executor's none: as when appended apart.
      expect(held.events[0]!.metadata.actorId).to.equal('u1');
      expect(held.events[2]!.metadata.actorId).to.equal(null);
      expect(held.events.map((e) => e.revision)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
    });

    it('a node that reaches a provider: what was held and its start are durable before the call', async () => {
      const { state } = await run(
        [
          { id: 'a', data: { nodeType: 'transform', template: 'A' } },
          { id: 'ask', data: { nodeType: 'llm', llm: 'openai', model: 'm', prompt: 'hi {{previous}}' } },
        ],
        { held: true },
      );
      expect(state.status, JSON.stringify(state.failure)).to.equal('completed');
      expect(startDurableAtCall).to.equal(true);
      expect(appends).to.deep.equal([['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'NodeStarted'], ['NodeCompleted', 'RunCompleted']]);
    });

    it('a local node still running at its next turn makes its start durable then', async () => {
      const { state } = await run(
        [
          { id: 'a', data: { nodeType: 'transform', template: 'A' } },
          { id: 'b', data: { nodeType: 'delay', delayMs: 30 } },
          { id: 'c', data: { nodeType: 'transform', template: 'C' } },
        ],
        { held: true },
      );
      expect(state.status).to.equal('completed');
      expect(appends).to.deep.equal([
        ['RunRequested', 'RunStarted', 'NodeStarted', 'NodeCompleted', 'NodeStarted'],
        ['NodeCompleted'],
        ['NodeStarted', 'NodeCompleted', 'RunCompleted'],
      ]);
    });

    it('a failing local node: the failure ends the run inside the one append', async () => {
      const { state } = await run([{ id: 'x', data: { nodeType: 'transform', template: 'x', conditions: [{ operator: 'bogus', value: 'x', targetNodeId: null }] } }], { held: true });
      expect(state.status).to.equal('failed');
      expect(appends).to.have.length(1);
      expect(appends[0]!.slice(0, 4)).to.deep.equal(['RunRequested', 'RunStarted', 'NodeStarted', 'NodeFailed']);
    });

    it('flushPending refuses when the stream exists after all, and the events stay held', async () => {
      const processId = randomUUID();
      const pending = pendingStream(runStreamId(processId), runDecider);
      const context: CommandContext = { actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() };
      const command = {
        type: 'RequestRun' as const, processId, flowId: 'f1', flowVersion: 0, ownerId: 'u1', orgId: null, workspaceId: null, mode: 'flow' as const, nodes: twoLocal, edges: [],
        inputs: {}, async: false, requestedBy: 'u1', at: context.now.toISOString(),
      };
      await handleCommand(store, { streamId: runStreamId(processId), decider: runDecider, command, context, pending });
      await handleCommand(raw, { streamId: runStreamId(processId), decider: runDecider, command, context });
      const err = await flushPending(store, runDecider, pending).catch((e) => e);
      expect(err.code).to.equal('CONCURRENCY_CONFLICT');
      expect(pending.flushed).to.equal(false);
      expect(await raw.readStream(runStreamId(processId))).to.have.length(1);
    });
  });
});
