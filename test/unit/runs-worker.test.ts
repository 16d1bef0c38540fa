import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { handleCommand, type CommandContext } from '../../commands/handle.js';
import { runWorker } from '../../consumers/runs.js';
import { runDecider, runStreamId } from '../../domain/runs/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { EventStore } from '../../ports/event-store.js';
import type { RunExecutor } from '../../ports/runs.js';

/**
 * The run worker's consumer on RunRequested: a run this process already folded past `queued` (a
 * sync run claimed in its own request) is left alone without reading its stream; any other run is
 * read from its stream and claimed when still queued.
 */
describe('run worker consumer (RunRequested)', () => {
  let raw: SqliteEventStore;
  let store: EventStore;
  let reads: string[];
  let executed: string[];

  beforeEach(() => {
    raw = new SqliteEventStore(':memory:');
    reads = [];
    executed = [];
    store = {
      adapter: raw.adapter,
      append: (streamId, events, expected) => raw.append(streamId, events, expected),
      readStream: (streamId, options) => {
        reads.push(streamId);
        return raw.readStream(streamId, options);
      },
      readAll: (options) => raw.readAll(options),
      subscribe: (options) => raw.subscribe(options),
      headPosition: () => raw.headPosition(),
      stats: () => raw.stats(),
      health: () => raw.health(),
      close: () => raw.close(),
    };
  });
  afterEach(() => raw.close());

  const context = (): CommandContext => ({ actorId: 'u1', orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });
  const runs: RunExecutor = {
    localWorkerId: 'host:1:x',
    execute: async (processId) => {
      executed.push(processId);
      return undefined as never;
    },
    abort() {},
    isExecuting: () => false,
  };
  const worker = () =>
    runWorker({ eventStore: store, clock: { now: () => new Date() }, logger: { debug() {}, info() {}, warn() {}, error() {}, child() { return this; } } as never, runs }, 'w');

  /** Requests a run through `via` (claimed by `claimBy` when given) and returns its RunRequested as recorded. */
  async function request(via: EventStore, claimBy?: string): Promise<RecordedEvent> {
    const processId = randomUUID();
    await handleCommand(via, {
      streamId: runStreamId(processId),
      decider: runDecider,
      command: {
        type: 'RequestRun', processId, flowId: 'f1', flowVersion: 0, ownerId: 'u1', orgId: null, workspaceId: null, mode: 'flow',
        nodes: [{ id: 'a', data: { nodeType: 'transform', template: 'x' } }], edges: [], inputs: {}, async: claimBy === undefined, requestedBy: 'u1',
        ...(claimBy !== undefined && { claimBy }), at: new Date().toISOString(),
      },
      context: context(),
    });
    const [requested] = await raw.readStream(runStreamId(processId), { maxCount: 1 });
    return requested!;
  }

  it('ignores, without a read, a run this process claimed in its request', async () => {
    const requested = await request(store, 'host:1:x');
    reads = [];
    await worker().handle(requested);
    expect(reads).to.deep.equal([]);
    expect(executed).to.deep.equal([]);
  });

  it('reads, claims and executes a queued run it has not folded (requested by another process)', async () => {
    const requested = await request(raw); // another store object: this one's cache knows nothing of it
    await worker().handle(requested);
    expect(reads).to.include(requested.streamId);
    expect(executed).to.deep.equal([requested.streamId.slice('run-'.length)]);
    const events = await raw.readStream(requested.streamId);
    expect(events.map((e) => e.type)).to.deep.equal(['RunRequested', 'RunStarted']);
  });

  it('reads a run that is still queued in its cache before claiming it (a redelivery after a claim elsewhere does nothing)', async () => {
    const requested = await request(store); // queued, and cached as queued here
    // Claimed by another worker behind this process's back.
    await handleCommand(raw, { streamId: requested.streamId, decider: runDecider, command: { type: 'ClaimRun', workerId: 'other@elsewhere', at: new Date().toISOString() }, context: context() });
    reads = [];
    await worker().handle(requested);
    expect(reads).to.include(requested.streamId);
    expect(executed).to.deep.equal([]);
  });
});
