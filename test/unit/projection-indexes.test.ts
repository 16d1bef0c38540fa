/**
 * Every read-model query a route or a consumer's hot path makes is served by an index its
 * projector declares (created at start by `setup`), so none scans a whole collection on the
 * MongoDB-wire servers; and README's "Read-model indexes" table lists those indexes.
 *
 * The query shapes are not copied by hand: each entry below calls the real query function on a
 * recording read store, and the test judges the filters and sorts it saw. An index serves a query
 * when its first key is constrained by the filter (or is the sort's first key), and, when the query
 * sorts, the sort keys follow the index keys the filter pins by equality, in the index's direction
 * or all reversed. A sort done in memory after an index narrowed the documents must say why.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { FlowScope } from '../../domain/flows/index.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { DocumentCollection, Filter, IndexSpec, ReadStore, Sort } from '../../ports/read-store.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { findMcpToolFlow, getFlow, listFlows, listMcpToolFlows, listNodeHistory, getTriggerKeyHash } from '../../projections/flows.js';
import { allProjectors } from '../../projections/index.js';
import { listDeadLetters } from '../../projections/operations-dead-letters.js';
import {
  activeFlowProcesses, getProcess, latestFlowProcess, listFlowProcesses, listRunningProcesses, runRecoveryQueries, runsProjector,
} from '../../projections/runs.js';
import { getWorker, listWorkers } from '../../projections/workers.js';
import { listDatasets, listEvaluations, runningEvaluations } from '../../projections/evals.js';
import { pageWorkflows, workflowQueries } from '../../projections/workflows.js';

interface Read {
  collection: string;
  filter: Filter;
  sort?: Sort;
}

/** A memory store that records the indexes `setup` creates and every read a query makes. */
function recordingStore(declared: Map<string, IndexSpec[]>, reads: Read[]): ReadStore {
  const inner = new MemoryReadStore();
  const store: ReadStore = Object.create(inner);
  store.collection = <T extends import('../../ports/read-store.js').Doc>(name: string) => {
    const c = inner.collection<T>(name);
    const wrapped: DocumentCollection<T> = Object.create(c);
    wrapped.find = (filter = {}, options = {}) => (reads.push({ collection: name, filter, sort: options.sort }), c.find(filter, options));
    wrapped.findOne = (filter, options = {}) => (reads.push({ collection: name, filter, sort: options.sort }), c.findOne(filter, options));
    wrapped.page = (filter, options) => (reads.push({ collection: name, filter, sort: options.sort }), c.page(filter, options));
    wrapped.count = (filter = {}) => (reads.push({ collection: name, filter }), c.count(filter));
    wrapped.createIndex = (spec) => (declared.set(name, [...(declared.get(name) ?? []), spec]), c.createIndex(spec));
    return wrapped;
  };
  return store;
}

const isOperatorObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof RegExp) && Object.keys(v).some((k) => k.startsWith('$'));

/** Fields the filter pins to one value or a list ($in), and fields it bounds (ranges). */
function shapeOf(filter: Filter): { pinned: Set<string>; bounded: Set<string> } {
  const pinned = new Set<string>();
  const bounded = new Set<string>();
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$')) continue; // $or/$and: not used by these queries; counts as unconstrained
    if (!isOperatorObject(value)) pinned.add(key);
    else if ('$eq' in value || '$in' in value) pinned.add(key);
    else if (['$gt', '$gte', '$lt', '$lte'].some((op) => op in value)) bounded.add(key);
  }
  return { pinned, bounded };
}

type Verdict = { ok: true; index: string } | { ok: false; why: string };

const indexName = (spec: IndexSpec) => spec.name ?? Object.entries(spec.keys).map(([k, d]) => `${k}_${d}`).join('_');

export function servedBy(read: Read, indexes: IndexSpec[], sortInMemory: boolean): Verdict {
  const { pinned, bounded } = shapeOf(read.filter);
  if (pinned.has('_id')) return { ok: true, index: '_id' };
  const sort = Object.entries(read.sort ?? {}).filter(([k]) => k !== '_id' && !pinned.has(k));
  let narrowing: string | null = null;
  // The serving index with the longest prefix the filter pins (what a planner would pick).
  let best: { index: string; prefix: number } | null = null;
  for (const spec of indexes) {
    const keys = Object.entries(spec.keys);
    const [first] = keys[0];
    if (!(pinned.has(first) || bounded.has(first) || sort[0]?.[0] === first)) continue;
    narrowing ??= indexName(spec);
    let i = 0;
    while (i < keys.length && pinned.has(keys[i][0])) i++;
    const rest = keys.slice(i, i + sort.length);
    const same = rest.length === sort.length && rest.every(([k], j) => k === sort[j][0]);
    const directions = sort.map(([, d], j) => d * rest[j]?.[1]);
    const sorted = !sort.length || sortInMemory || (same && (directions.every((d) => d === 1) || directions.every((d) => d === -1)));
    if (sorted && (!best || i > best.prefix)) best = { index: indexName(spec), prefix: i };
  }
  if (best) return { ok: true, index: best.index };
  if (narrowing) return { ok: false, why: `index ${narrowing} narrows the filter but the sort ${JSON.stringify(read.sort)} is not served by an index` };
  return { ok: false, why: `no declared index on ${read.collection} serves filter ${JSON.stringify(read.filter)}${read.sort ? ` sort ${JSON.stringify(read.sort)}` : ''}: a whole-collection scan` };
}

const alice: FlowScope = { userId: 'alice', orgId: null, workspaceId: null };
const team: FlowScope = { userId: 'alice', orgId: 'org-1', workspaceId: 'ws-1' };
const at = '2026-01-01T00:00:00.000Z';

interface Query {
  /** The route or consumer that makes the query (README table's last column). */
  usedBy: string;
  call: (store: ReadStore) => Promise<unknown>;
  /** Set when a sort is done in memory over the documents an index narrowed to, with why that is bounded. */
  sortInMemory?: string;
}

/** The queries of the routes and consumers on the hot paths (runs, flows, workers, workflows, operations). */
export const QUERIES: Query[] = [
  { usedBy: 'GET /processes/{id}', call: (s) => getProcess(s, 'p1', alice) },
  { usedBy: 'GET /flows/{id}/processes', call: (s) => listFlowProcesses(s, 'f1', { limit: 20 }) },
  { usedBy: 'GET /flows/{id}/status, app instances (last run)', call: (s) => latestFlowProcess(s, 'f1') },
  { usedBy: 'POST /flows/{id}/stop (active runs)', call: (s) => activeFlowProcesses(s, 'f1') },
  { usedBy: 'GET /processes/running (personal)', call: (s) => listRunningProcesses(s, alice, { limit: 20 }) },
  { usedBy: 'GET /processes/running (organization)', call: (s) => listRunningProcesses(s, team, { limit: 20 }) },
  { usedBy: 'runs recovery consumer (running runs)', call: (s) => runRecoveryQueries(s).runningRuns(100) },
  { usedBy: 'runs deadline sweep (overdue runs)', call: (s) => runRecoveryQueries(s).overdueRuns('queued', at, 100) },
  { usedBy: 'runs recovery consumer (worker presence)', call: (s) => runRecoveryQueries(s).workerPresence('w1') },
  {
    usedBy: 'processes projector (a batch reads its runs)',
    call: (s) => runsProjector.projectBatch!([runEvent('p1', 3), runEvent('p2', 5)], s),
  },
  { usedBy: 'GET /system/workers', call: (s) => listWorkers(s, { limit: 20 }) },
  { usedBy: 'worker presence', call: (s) => getWorker(s, 'w1') },
  { usedBy: 'flow routes, run start, public trigger (a flow by id)', call: (s) => getFlow(s, 'f1', alice) },
  { usedBy: 'GET /flows (archived=true|false, personal)', call: (s) => listFlows(s, alice, { archived: false, limit: 20 }) },
  { usedBy: 'GET /flows (archived=true|false, organization)', call: (s) => listFlows(s, team, { archived: true, limit: 20 }) },
  {
    usedBy: 'GET /flows (active and archived together)',
    call: (s) => listFlows(s, alice, { limit: 20 }),
    sortInMemory: "one owner's (or one workspace's) flows, narrowed by the flows_by_owner / flows_by_workspace prefix",
  },
  { usedBy: 'POST /mcp tools/list', call: (s) => listMcpToolFlows(s, team) },
  { usedBy: 'POST /mcp tools/call', call: (s) => findMcpToolFlow(s, team, 'tool') },
  { usedBy: 'GET /flows/{id}/nodes/{nodeId}/history', call: (s) => listNodeHistory(s, 'f1', 'n1', { limit: 20 }) },
  { usedBy: 'public trigger (key check)', call: (s) => getTriggerKeyHash(s, 'f1', null) },
  { usedBy: 'GET /workflows', call: (s) => pageWorkflows(s, team, {}, { limit: 20 }) },
  { usedBy: 'GET /workflows?status=', call: (s) => pageWorkflows(s, team, { status: 'RUNNING' }, { limit: 20 }) },
  { usedBy: 'workflow timers consumer (due timers)', call: (s) => workflowQueries(s).dueTimers(at, 100) },
  { usedBy: 'workflow recovery consumer (running workflows)', call: (s) => workflowQueries(s).runningWorkflows(100) },
  { usedBy: 'GET /admin/dead-letters', call: (s) => listDeadLetters(s, {}, 20, null) },
  { usedBy: 'GET /admin/dead-letters?consumer=', call: (s) => listDeadLetters(s, { consumer: 'c' }, 20, null) },
  { usedBy: 'GET /evals/datasets (personal)', call: (s) => listDatasets(s, { userId: 'u1', orgId: null, workspaceId: null }, { limit: 20, cursor: null }) },
  { usedBy: 'GET /evals/datasets (organization)', call: (s) => listDatasets(s, { userId: 'u1', orgId: 'o1', workspaceId: 'w1' }, { limit: 20, cursor: null }) },
  { usedBy: 'GET /evals/evaluations (personal)', call: (s) => listEvaluations(s, { userId: 'u1', orgId: null, workspaceId: null }, { limit: 20, cursor: null, datasetId: 'd1' }) },
  { usedBy: 'GET /evals/evaluations (organization)', call: (s) => listEvaluations(s, { userId: 'u1', orgId: 'o1', workspaceId: 'w1' }, { limit: 20, cursor: null }) },
  { usedBy: 'evaluation resume sweep (running evaluations)', call: (s) => runningEvaluations(s) },
];

function runEvent(processId: string, revision: number): RecordedEvent {
  return {
    id: `e${revision}`, type: 'RunClaimed', streamId: `run-${processId}`, revision, position: revision + 1, schemaVersion: 1,
    data: { workerId: 'w1', at }, metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
  };
}

const README_HEADING = '### Read-model indexes';

describe('read-model indexes', () => {
  const declared = new Map<string, IndexSpec[]>();
  const perQuery: Array<{ query: Query; reads: Read[] }> = [];

  before(async () => {
    const reads: Read[] = [];
    const store = recordingStore(declared, reads);
    for (const projector of allProjectors) await projector.setup(store);
    reads.length = 0; // what setup itself reads is not a query
    for (const query of QUERIES) {
      const from = reads.length;
      await query.call(store).catch(() => undefined); // an empty store may make a projector give up after its reads
      perQuery.push({ query, reads: reads.slice(from) });
    }
  });

  it('every query of a route or hot consumer is served by a declared index (no whole-collection scan)', () => {
    const problems: string[] = [];
    for (const { query, reads } of perQuery) {
      expect(reads, `${query.usedBy} made no read`).to.not.be.empty;
      for (const read of reads) {
        const verdict = servedBy(read, declared.get(read.collection) ?? [], !!query.sortInMemory);
        if (!verdict.ok) problems.push(`${query.usedBy}: ${verdict.why}`);
      }
    }
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('the judge is not a stub: it refuses a scan, an unserved sort, and accepts the ESR shapes', () => {
    const idx: IndexSpec[] = [{ keys: { status: 1, requestedAt: -1 } }];
    expect(servedBy({ collection: 'c', filter: { flowId: 'f' } }, idx, false).ok).to.equal(false);
    expect(servedBy({ collection: 'c', filter: {}, sort: { requestedAt: 1 } }, idx, false).ok).to.equal(false);
    expect(servedBy({ collection: 'c', filter: { status: 'x' }, sort: { updatedAt: 1 } }, idx, false).ok).to.equal(false);
    expect(servedBy({ collection: 'c', filter: { status: 'x' }, sort: { updatedAt: 1 } }, idx, true).ok).to.equal(true);
    expect(servedBy({ collection: 'c', filter: { status: { $in: ['a', 'b'] } }, sort: { requestedAt: -1 } }, idx, false).ok).to.equal(true);
    expect(servedBy({ collection: 'c', filter: { status: 'x', requestedAt: { $lte: at } }, sort: { requestedAt: 1 } }, idx, false).ok).to.equal(true);
    expect(servedBy({ collection: 'c', filter: { _id: 'a', other: 1 } }, [], false).ok).to.equal(true);
  });

  it(`README lists every index these queries use under "${README_HEADING}"`, () => {
    // The table as it should read: every index declared on the collections these queries read, and who uses it.
    const users = new Map<string, Set<string>>();
    for (const { query, reads } of perQuery) {
      for (const read of reads) {
        const verdict = servedBy(read, declared.get(read.collection) ?? [], !!query.sortInMemory);
        if (!verdict.ok || verdict.index === '_id') continue;
        const key = `${read.collection} ${verdict.index}`;
        users.set(key, (users.get(key) ?? new Set()).add(query.usedBy));
      }
    }
    const collections = [...new Set(perQuery.flatMap((q) => q.reads.map((r) => r.collection)))].sort();
    const rows = collections.flatMap((collection) =>
      (declared.get(collection) ?? []).map((spec) => {
        const keys = Object.entries(spec.keys).map(([k, d]) => `${k}: ${d}`).join(', ');
        return { collection, keys, row: `| \`${collection}\` | \`{ ${keys} }\`${spec.unique ? ' unique' : ''} | ${[...(users.get(`${collection} ${indexName(spec)}`) ?? ['—'])].join('; ')} |` };
      }),
    );
    const table = ['| Collection | Index keys | Used by |', '|---|---|---|', ...rows.map((r) => r.row)].join('\n');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf(`\n${README_HEADING}\n`);
    const section = start === -1 ? '' : readme.slice(start + README_HEADING.length + 2).split(/\n#{1,3} /)[0];
    const missing = rows.filter(({ collection, keys }) => !section.split('\n').some((line) => line.startsWith(`| \`${collection}\``) && line.includes(`\`{ ${keys} }\``)));
    expect(missing.length, `README needs a "${README_HEADING}" section with this table (rows missing: ${missing.length}):\n\n${table}\n`).to.equal(0);
  });
});
