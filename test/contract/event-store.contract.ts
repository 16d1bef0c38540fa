import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { EventMetadata, RecordedEvent } from '../../domain/shared/events.js';
import { ConcurrencyError, type EventStore, type EventSubscription, type ExpectedRevision, type NewEvent } from '../../ports/event-store.js';

const WAIT_MS = 5000;
const runId = randomBytes(4).toString('hex');
let counter = 0;
/** A category nobody else has written to (unique per run, so a persistent server works too). */
const freshCategory = () => `ct${runId}x${++counter}`;
const freshStream = (category = freshCategory()) => `${category}-${randomBytes(3).toString('hex')}`;

const meta = (): EventMetadata => ({
  ...{ actorId: 'user-42', orgId: 'org-7', workspaceId: null, correlationId: randomUUID(), causationId: null },
  ...{ requestId: `req-${randomUUID()}`, occurredAt: new Date().toISOString() },
});
const ev = (type = 'ThingHappened', data: unknown = { n: 1 }, extra: Partial<NewEvent> = {}): NewEvent => ({
  ...{ id: randomUUID(), type, data, metadata: meta() },
  ...extra,
});
const evs = (n: number, type = 'ThingHappened') => Array.from({ length: n }, (_, i) => ev(type, { i }));

async function conflict(promise: Promise<unknown>): Promise<ConcurrencyError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ConcurrencyError);
    return err as ConcurrencyError;
  }
  expect.fail('expected a ConcurrencyError, the append succeeded');
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), Math.max(ms, 1));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Pulls exactly `n` events from a subscription, failing after WAIT_MS. */
async function take(it: AsyncIterator<RecordedEvent>, n: number): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  const deadline = Date.now() + WAIT_MS;
  while (out.length < n) {
    const next = await withTimeout(it.next(), deadline - Date.now(), `event ${out.length + 1} of ${n}`);
    if (next.done) expect.fail(`subscription ended after ${out.length} of ${n} events`);
    out.push(next.value);
  }
  return out;
}

export function eventStoreContract(label: string, make: () => Promise<EventStore>): void {
  describe(`EventStore contract: ${label}`, function () {
    this.timeout(20000);
    let store: EventStore;
    const subs: EventSubscription[] = [];
    const subscribe = (...args: Parameters<EventStore['subscribe']>) => {
      const sub = store.subscribe(...args);
      subs.push(sub);
      return sub;
    };

    before(async () => void (store = await make()));
    afterEach(async () => void (await Promise.all(subs.splice(0).map((s) => s.close()))));
    after(async () => store?.close());

    it('reports health and an adapter name', async () => {
      expect(store.adapter).to.be.a('string').and.not.equal('');
      expect((await store.health()).ok).to.equal(true);
    });

    it('headPosition is 0 on an empty log and the last event position after appends', async function () {
      if ((await store.readAll({ maxCount: 1 })).length > 0) {
        console.log('SKIP headPosition on an empty log: this event store already holds history (a persistent server)');
        this.skip();
      }
      expect(await store.headPosition()).to.equal(0);
      const r = await store.append(freshStream(), evs(2), 'no_stream');
      expect(await store.headPosition()).to.equal(r.position);
    });

    it('headPosition follows the last appended event', async () => {
      const a = await store.append(freshStream(), evs(1), 'any');
      expect(await store.headPosition()).to.equal(a.position);
      const b = await store.append(freshStream(), evs(3), 'any');
      expect(b.position).to.be.greaterThan(a.position);
      expect(await store.headPosition()).to.equal(b.position);
    });

    it('stats: the head position, and the event count and size when the adapter knows them, grow with appends', async () => {
      const before = await store.stats();
      const r = await store.append(freshStream(), evs(3), 'any');
      const after = await store.stats();
      expect(after.headPosition).to.equal(r.position);
      expect(after.headPosition).to.be.greaterThan(before.headPosition);
      if (before.events !== null) expect(after.events).to.equal(before.events + 3);
      if (after.bytes !== null) expect(after.bytes).to.be.greaterThan(0);
    });

    it("appends with 'no_stream': creates the stream, 0-based contiguous revisions, conflicts once it exists", async () => {
      const s = freshStream();
      const r = await store.append(s, evs(3), 'no_stream');
      expect(r.revision).to.equal(2);
      const read = await store.readStream(s);
      expect(read.map((e) => e.revision)).to.deep.equal([0, 1, 2]);
      expect(read.map((e) => e.streamId)).to.deep.equal([s, s, s]);
      expect(r.position).to.equal(read[2]!.position);
      const err = await conflict(store.append(s, evs(1), 'no_stream'));
      expect(err.name).to.equal('ConcurrencyError');
      expect([err.streamId, err.expected, err.actual]).to.deep.equal([s, 'no_stream', 2]);
      expect(await store.readStream(s)).to.have.length(3);
    });

    it("appends with 'any' to a new and to an existing stream", async () => {
      const s = freshStream();
      expect((await store.append(s, evs(1), 'any')).revision).to.equal(0);
      expect((await store.append(s, evs(2), 'any')).revision).to.equal(2);
      expect((await store.readStream(s)).map((e) => e.revision)).to.deep.equal([0, 1, 2]);
    });

    it("appends with 'stream_exists': conflicts on a missing stream, succeeds on an existing one", async () => {
      const s = freshStream();
      const err = await conflict(store.append(s, evs(1), 'stream_exists'));
      expect([err.streamId, err.expected, err.actual]).to.deep.equal([s, 'stream_exists', 'no_stream']);
      expect(await store.readStream(s)).to.deep.equal([]);
      await store.append(s, evs(1), 'no_stream');
      expect((await store.append(s, evs(1), 'stream_exists')).revision).to.equal(1);
    });

    it('appends with a numeric revision: the last revision succeeds, a stale or missing one conflicts', async () => {
      const s = freshStream();
      const missing = await conflict(store.append(s, evs(1), 0));
      expect([missing.expected, missing.actual]).to.deep.equal([0, 'no_stream']);
      await store.append(s, evs(2), 'no_stream');
      expect((await store.append(s, evs(1), 1)).revision).to.equal(2);
      const stale = await conflict(store.append(s, evs(1), 1));
      expect([stale.streamId, stale.expected, stale.actual]).to.deep.equal([s, 1, 2]);
      const ahead = await conflict(store.append(s, evs(1), 5));
      expect([ahead.expected, ahead.actual]).to.deep.equal([5, 2]);
      expect((await store.readStream(s)).map((e) => e.revision)).to.deep.equal([0, 1, 2]);
    });

    it('concurrent appends with the same expected revision: exactly one wins', async () => {
      for (const expected of ['no_stream', 0] as ExpectedRevision[]) {
        const s = freshStream();
        if (expected === 0) await store.append(s, evs(1), 'no_stream');
        const contenders = Array.from({ length: 6 }, (_, i) => ev('Contended', { i }));
        const results = await Promise.allSettled(contenders.map((e) => store.append(s, [e], expected)));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won, `winners with expected ${expected}`).to.have.length(1);
        expect(lost).to.have.length(5);
        for (const reason of lost) expect(reason).to.be.instanceOf(ConcurrencyError);
        const stored = await store.readStream(s);
        expect(stored).to.have.length(expected === 0 ? 2 : 1);
        const winner = contenders[results.findIndex((r) => r.status === 'fulfilled')]!;
        expect(stored[stored.length - 1]!.id).to.equal(winner.id);
      }
    });

    it('appends issued together (one group commit on SQLite) keep their own expected-revision check and result', async () => {
      const streams = Array.from({ length: 8 }, () => freshStream());
      await store.append(streams[0]!, evs(1), 'no_stream');
      const expectedOf = (i: number): ExpectedRevision => (i === 0 ? 0 : i === 3 ? 5 : 'no_stream');
      const results = await Promise.allSettled(streams.map((s, i) => store.append(s, [ev('Together', { i })], expectedOf(i))));
      expect(results[3]!.status).to.equal('rejected');
      expect((results[3] as PromiseRejectedResult).reason).to.be.instanceOf(ConcurrencyError);
      expect(await store.readStream(streams[3]!)).to.deep.equal([]);
      for (const [i, r] of results.entries()) {
        if (i === 3) continue;
        expect(r.status, `append ${i}`).to.equal('fulfilled');
        const result = (r as PromiseFulfilledResult<{ revision: number; position: number }>).value;
        const stored = await store.readStream(streams[i]!);
        expect(stored.map((e) => e.revision)).to.deep.equal(i === 0 ? [0, 1] : [0]);
        expect(result).to.deep.include({ revision: i === 0 ? 1 : 0, position: stored[stored.length - 1]!.position });
        expect(stored[stored.length - 1]!.data).to.deep.equal({ i });
      }
    });

    it('reads a stream forwards and backwards with fromRevision and maxCount', async () => {
      const s = freshStream();
      await store.append(s, evs(5), 'no_stream');
      const revs = (events: RecordedEvent[]) => events.map((e) => e.revision);
      expect(revs(await store.readStream(s))).to.deep.equal([0, 1, 2, 3, 4]);
      expect(revs(await store.readStream(s, { fromRevision: 2 }))).to.deep.equal([2, 3, 4]);
      expect(revs(await store.readStream(s, { fromRevision: 1, maxCount: 2 }))).to.deep.equal([1, 2]);
      expect(revs(await store.readStream(s, { maxCount: 1 }))).to.deep.equal([0]);
      expect(revs(await store.readStream(s, { direction: 'backwards' }))).to.deep.equal([4, 3, 2, 1, 0]);
      expect(revs(await store.readStream(s, { direction: 'backwards', maxCount: 2 }))).to.deep.equal([4, 3]);
      expect(revs(await store.readStream(s, { direction: 'backwards', fromRevision: 2 }))).to.deep.equal([2, 1, 0]);
      expect(revs(await store.readStream(s, { direction: 'backwards', fromRevision: 3, maxCount: 2 }))).to.deep.equal([3, 2]);
      expect(revs(await store.readStream(s, { fromRevision: 9 }))).to.deep.equal([]);
      expect((await store.readStream(s)).map((e) => (e.data as { i: number }).i)).to.deep.equal([0, 1, 2, 3, 4]);
    });

    it('reads a missing stream as an empty array, in both directions', async () => {
      const s = freshStream();
      expect(await store.readStream(s)).to.deep.equal([]);
      expect(await store.readStream(s, { direction: 'backwards', maxCount: 3 })).to.deep.equal([]);
    });

    it('round-trips ids, types, data, metadata and schemaVersion', async () => {
      const s = freshStream();
      const data = { text: 'héllo ✓ 日本', nested: { list: [1, 'two', null, { deep: true }] }, zero: 0, no: false, nil: null };
      const sent: NewEvent[] = [
        ev('FlowCreated', data, { schemaVersion: 3 }),
        ev('NodeAdded', [1, 2, 3]),
        ev('NoteWritten', 'plain string', { id: `evt_${randomBytes(6).toString('hex')}`, schemaVersion: 2 }),
      ];
      const before = await store.headPosition(); // `after` must be a position the store gave out
      await store.append(s, sent, 'no_stream');
      const expected = sent.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, schemaVersion: e.schemaVersion ?? 1 }));
      const pick = (e: RecordedEvent) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, schemaVersion: e.schemaVersion });
      expect((await store.readStream(s)).map(pick)).to.deep.equal(expected);
      expect((await store.readAll({ after: before, categories: [s.split('-')[0]!] })).map(pick)).to.deep.equal(expected);
      const [first] = await take(subscribe({ after: before, categories: [s.split('-')[0]!] })[Symbol.asyncIterator](), 1);
      expect(pick(first!)).to.deep.equal(expected[0]);
    });

    it('positions are strictly increasing across streams and append results match reads', async () => {
      const cat = freshCategory();
      const [a, b] = [freshStream(cat), freshStream(cat)];
      const before = await store.headPosition();
      const results = [];
      for (const s of [a, b, a, b, a]) results.push(await store.append(s, evs(2), 'any'));
      const positions = results.map((r) => r.position);
      for (let i = 1; i < positions.length; i++) expect(positions[i]).to.be.greaterThan(positions[i - 1]!);
      const all = await store.readAll({ after: before, categories: [cat] });
      expect(all).to.have.length(10);
      for (let i = 1; i < all.length; i++) expect(all[i]!.position).to.be.greaterThan(all[i - 1]!.position);
      expect(all.filter((_, i) => i % 2 === 1).map((e) => e.position)).to.deep.equal(positions);
      expect(all.map((e) => e.streamId)).to.deep.equal([a, a, b, b, a, a, b, b, a, a]);
    });

    it('readAll is exclusive of `after`, honours maxCount and filters categories', async () => {
      const [c1, c2, c3] = [freshCategory(), freshCategory(), freshCategory()];
      const before = await store.headPosition();
      await store.append(freshStream(c1), evs(3), 'no_stream');
      await store.append(freshStream(c2), evs(2), 'no_stream');
      await store.append(freshStream(c3), evs(1), 'no_stream');
      await store.append(freshStream(c1), evs(1), 'no_stream');
      const mine = (await store.readAll({ after: before, maxCount: 10_000 })).filter((e) => [c1, c2, c3].some((c) => e.streamId.startsWith(`${c}-`)));
      expect(mine).to.have.length(7);
      const c1Events = await store.readAll({ after: before, categories: [c1] });
      expect(c1Events.map((e) => e.id)).to.deep.equal(mine.filter((e) => e.streamId.startsWith(`${c1}-`)).map((e) => e.id));
      expect(c1Events).to.have.length(4);
      const two = await store.readAll({ after: before, categories: [c2, c3] });
      expect(two.map((e) => e.id)).to.deep.equal(mine.slice(3, 6).map((e) => e.id));
      const after = await store.readAll({ after: c1Events[0]!.position, categories: [c1] });
      expect(after.map((e) => e.id)).to.deep.equal(c1Events.slice(1).map((e) => e.id));
      const page = await store.readAll({ after: c1Events[0]!.position, maxCount: 2, categories: [c1] });
      expect(page.map((e) => e.id)).to.deep.equal(c1Events.slice(1, 3).map((e) => e.id));
      expect(await store.readAll({ after: c1Events[3]!.position, categories: [c1] })).to.deep.equal([]);
    });

    it('subscribe catches up, then delivers events appended after subscribing', async () => {
      const cat = freshCategory();
      const s = freshStream(cat);
      const before = await store.headPosition();
      const first = evs(2);
      await store.append(s, first, 'no_stream');
      const it = subscribe({ after: before, categories: [cat] })[Symbol.asyncIterator]();
      expect((await take(it, 2)).map((e) => e.id)).to.deep.equal(first.map((e) => e.id));
      const live = evs(2);
      const pending = take(it, 2);
      await store.append(s, [live[0]!], 1);
      await store.append(s, [live[1]!], 2);
      const got = await pending;
      expect(got.map((e) => e.id)).to.deep.equal(live.map((e) => e.id));
      expect(got.map((e) => e.revision)).to.deep.equal([2, 3]);
      expect(got[1]!.position).to.be.greaterThan(got[0]!.position);
    });

    it('subscribe with `after` is exclusive; without it, starts at the beginning of the log', async () => {
      const cat = freshCategory();
      const sent = evs(3);
      const before = await store.headPosition();
      await store.append(freshStream(cat), sent, 'no_stream');
      const all = await store.readAll({ after: before, maxCount: 3, categories: [cat] });
      expect(all).to.have.length(3);
      const fromFirst = subscribe({ after: all[0]!.position, categories: [cat] })[Symbol.asyncIterator]();
      expect((await take(fromFirst, 2)).map((e) => e.id)).to.deep.equal(sent.slice(1).map((e) => e.id));
      const fromStart = subscribe({ categories: [cat] })[Symbol.asyncIterator]();
      const got = await take(fromStart, 3);
      expect(got.map((e) => e.id)).to.deep.equal(sent.map((e) => e.id));
      expect(got[0]).to.deep.equal(all[0]);
    });

    it('subscribe filters by category (and without categories sees every category)', async () => {
      const [wanted, other] = [freshCategory(), freshCategory()];
      const [w, o] = [freshStream(wanted), freshStream(other)];
      const before = await store.headPosition();
      const filtered = subscribe({ after: before, categories: [wanted] })[Symbol.asyncIterator]();
      const everything = subscribe({ after: before })[Symbol.asyncIterator]();
      const sent = [ev('A'), ev('B'), ev('A')];
      await store.append(w, [sent[0]!], 'any');
      await store.append(o, [sent[1]!], 'any');
      await store.append(w, [sent[2]!], 'any');
      const got = await take(filtered, 2);
      expect(got.map((e) => e.id)).to.deep.equal([sent[0]!.id, sent[2]!.id]);
      expect(got.map((e) => e.streamId)).to.deep.equal([w, w]);
      const seen: RecordedEvent[] = [];
      while (seen.length < 3) seen.push(...(await take(everything, 1)).filter((e) => e.streamId === w || e.streamId === o));
      expect(seen.map((e) => e.id)).to.deep.equal(sent.map((e) => e.id));
    });

    it('close() ends a running `for await` loop, from inside the loop and while it waits for live events', async () => {
      const cat = freshCategory();
      await store.append(freshStream(cat), evs(3), 'no_stream');
      const inside = subscribe({ categories: [cat] });
      const seenInside: RecordedEvent[] = [];
      const insideLoop = (async () => {
        for await (const e of inside) {
          seenInside.push(e);
          await inside.close(); // two more events are already available: none may follow
        }
        return 'ended';
      })();
      expect(await withTimeout(insideLoop, WAIT_MS, 'the loop to end')).to.equal('ended');
      expect(seenInside).to.have.length(1);

      const waiting = subscribe({ categories: [cat] });
      const seen: RecordedEvent[] = [];
      let caughtUp!: () => void;
      const threeSeen = new Promise<void>((resolve) => (caughtUp = resolve));
      const loop = (async () => {
        for await (const e of waiting) if (seen.push(e) === 3) caughtUp();
        return 'ended';
      })();
      await withTimeout(threeSeen, WAIT_MS, 'catch-up');
      // Kept: no port shows that a subscription has drained and sleeps until the next append, so 50 ms
      // lets the read behind the loop's 4th next() (already pending) finish; close() must end the loop either way.
      await new Promise((r) => setTimeout(r, 50));
      await withTimeout(waiting.close(), WAIT_MS, 'close()');
      expect(await withTimeout(loop, WAIT_MS, 'the loop to end')).to.equal('ended');
      // The loop has ended: an append after close() has no way into `seen`, no need to wait for it.
      await store.append(freshStream(cat), evs(1), 'no_stream');
      expect(seen).to.have.length(3);
    });
  });
}
