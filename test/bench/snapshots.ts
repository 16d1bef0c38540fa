/**
 * Snapshots: a flow edited 100,000 times, loaded cold (a process without it in its cache) by the
 * command handler and by time travel to its latest version, folding from zero (SNAPSHOT_EVERY=0)
 * and from a snapshot 250 events back (what SNAPSHOT_EVERY=500 leaves on average).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { loadState } from '../../commands/handle.js';
import { configureSnapshots, saveSnapshot, stateAtRevision } from '../../commands/snapshots.js';
import { flowDecider, flowStreamId, type FlowCommand, type FlowState } from '../../domain/flows/index.js';
import { allRetentionPolicies } from '../../domain/retention.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { NewEvent } from '../../ports/event-store.js';
import { fmt, now, settle, tempDir, type Report } from './support.js';

const BENCH = 'snapshots (a flow edited 100,000 times)';

export interface SnapshotsOptions {
  edits: number;
  /** Events behind the head the snapshot is taken at. */
  behind: number;
  repeats: number;
}

export const defaults: SnapshotsOptions = { edits: 100_000, behind: 250, repeats: 3 };

const metadata = { actorId: 'u1', orgId: null, workspaceId: null, correlationId: 'bench', causationId: null, requestId: null, occurredAt: new Date(0).toISOString() };

/** The flow's events, decided one edit at a time on the state before (20 nodes moved, edited and renamed over and over). */
function editEvents(edits: number, keep: number[]): { events: NewEvent[]; states: Map<number, FlowState> } {
  const at = new Date(0).toISOString();
  const commands = function* (): Generator<FlowCommand> {
    yield { type: 'CreateFlow', flowId: 'bench', name: 'Bench', ownerId: 'u1', orgId: null, workspaceId: null, at };
    for (let n = 0; n < 20; n++) yield { type: 'AddNode', nodeId: `n${n}`, node: { type: 'custom', position: { x: n, y: 0 }, data: { nodeType: 'transform', template: `t${n}` } }, at };
    for (let i = 0; ; i++) {
      const nodeId = `n${i % 20}`;
      yield i % 3 === 0 ? { type: 'RenameFlow', name: `Bench ${i}`, at } : { type: 'UpdateNode', nodeId, patch: { position: { x: i, y: i % 97 }, data: { template: `t${i}` } }, at };
    }
  };
  const events: NewEvent[] = [];
  const states = new Map<number, FlowState>();
  let state = flowDecider.initialState;
  for (const command of commands()) {
    for (const e of flowDecider.decide(command, state)) {
      state = flowDecider.evolve(state, e);
      events.push({ id: randomUUID(), type: e.type, data: e.data, metadata });
      if (keep.includes(events.length - 1)) states.set(events.length - 1, state);
    }
    if (events.length >= edits) break;
  }
  return { events, states };
}

export async function benchSnapshots(report: Report, o: SnapshotsOptions = defaults): Promise<void> {
  const dir = tempDir('snapshots');
  const file = join(dir.path, 'events.db');
  const streamId = flowStreamId('bench');
  try {
    const last = o.edits - 1;
    const at = last - o.behind;
    const { events, states } = editEvents(o.edits, [at, last]);
    const seed = new SqliteEventStore(file, { retention: allRetentionPolicies, durability: 'process' });
    for (let i = 0; i < events.length; i += 1000) await seed.append(streamId, events.slice(i, i + 1000), i === 0 ? 'no_stream' : i - 1);
    await saveSnapshot(seed, streamId, flowDecider, at, states.get(at)!);
    await seed.close();
    report.info(BENCH, `seeded ${fmt(events.length)} events of one flow (20 nodes); snapshot at revision ${fmt(at)}, ${o.behind} events behind the head`);
    await settle();

    /** The best of `repeats` cold loads, each in a fresh store (no cached state), checked against the fold of every event. */
    const measure = async (every: number, load: (store: SqliteEventStore) => Promise<FlowState>) => {
      let best = Infinity;
      for (let r = 0; r < o.repeats; r++) {
        const store = new SqliteEventStore(file, { retention: allRetentionPolicies, durability: 'process' });
        configureSnapshots(store, { every });
        try {
          const t0 = now();
          const state = await load(store);
          best = Math.min(best, now() - t0);
          if (!isDeepStrictEqual(JSON.parse(JSON.stringify(state)), JSON.parse(JSON.stringify(states.get(last))))) throw new Error(`SNAPSHOT_EVERY=${every}: the loaded state differs from the fold of every event`);
        } finally {
          await store.close();
        }
        await settle();
      }
      return best;
    };
    for (const [what, load] of [
      ['command handler, cold load (loadState)', async (store: SqliteEventStore) => (await loadState(store, streamId, flowDecider)).state],
      ['time travel to the latest version', async (store: SqliteEventStore) => (await stateAtRevision(store, streamId, flowDecider, last)).state],
    ] as const) {
      const zero = await measure(0, load);
      const snap = await measure(500, load);
      report.figure(BENCH, `${what}: from zero`, zero, 'ms', { digits: 1, note: `${fmt(events.length)} events read and folded` });
      report.figure(BENCH, `${what}: from a snapshot`, snap, 'ms', { digits: 1, note: `${fmt((zero / snap), 0)}× faster; ${o.behind} events folded after it` });
    }
  } finally {
    dir.cleanup();
  }
}
