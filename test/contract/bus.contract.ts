import { MongoNetworkError } from 'mongodb';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { categoryOf, type RecordedEvent } from '../../domain/shared/events.js';
import type { Bus, Consumer, RunningConsumer } from '../../ports/bus.js';
import type { DeadLetter, DeadLetterSink } from '../../ports/dead-letters.js';
import type { EventStore } from '../../ports/event-store.js';

export interface BusFixture {
  bus: Bus;
  eventStore: EventStore;
  /** What the bus handed to its DeadLetterSink; the sink refuses while `failing` is above 0 (and counts it down). */
  deadLetters: { recorded: DeadLetter[]; failing: number };
  cleanup(): Promise<void>;
}

/** A sink that records in memory, and refuses `failing` times first (the event store down). */
export function memorySink(): BusFixture['deadLetters'] & DeadLetterSink {
  const sink = {
    recorded: [] as DeadLetter[],
    failing: 0,
    async record(letter: DeadLetter) {
      if (sink.failing > 0) {
        sink.failing--;
        throw new Error('sink unavailable');
      }
      sink.recorded.push(letter);
    },
  };
  return sink;
}

const WAIT_MS = 30_000;

/** Polls until `done()`; fails with what was awaited and what was seen, never hangs. */
export async function waitUntil(done: () => boolean, what: () => string, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Appends `perStream` events to each stream, interleaving streams so the log mixes them.
 * Returns the ids, in log order, optionally only those of one category.
 */
export async function appendRound(store: EventStore, streams: string[], perStream: number, from = 0, onlyCategory?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = from; n < from + perStream; n++) {
    for (const streamId of streams) {
      const id = randomUUID();
      if (!onlyCategory || categoryOf(streamId) === onlyCategory) ids.push(id);
      await store.append(streamId, [{ id, type: 'ContractTested', data: { n }, metadata: metadata() }], n === 0 ? 'no_stream' : n - 1);
    }
  }
  return ids;
}

function metadata() {
  const correlationId = randomUUID();
  return { actorId: null, orgId: null, workspaceId: null, correlationId, causationId: null, requestId: null, occurredAt: new Date().toISOString() };
}

/** Records every delivery (duplicates included) in arrival order. */
export function recorder(name: string, categories: string[], onEvent?: (e: RecordedEvent) => void): Consumer & { seen: RecordedEvent[]; ids(): Set<string> } {
  const seen: RecordedEvent[] = [];
  return {
    name,
    categories,
    seen,
    ids: () => new Set(seen.map((e) => e.id)),
    async handle(event) {
      onEvent?.(event);
      seen.push(event);
    },
  };
}

/** First delivery of each event must come in stream order with no gap. */
export function expectPerStreamOrder(events: RecordedEvent[]): void {
  const seenIds = new Set<string>();
  const next = new Map<string, number>();
  for (const e of events) {
    if (seenIds.has(e.id)) continue;
    seenIds.add(e.id);
    expect(e.revision, `stream ${e.streamId}: first delivery of revision ${e.revision}`).to.equal(next.get(e.streamId) ?? 0);
    next.set(e.streamId, e.revision + 1);
  }
}

const missing = (want: string[], got: Set<string>) => want.filter((id) => !got.has(id)).length;

export function busContract(label: string, make: () => Promise<BusFixture>): void {
  describe(`Bus contract: ${label}`, function () {
    this.timeout(60_000);
    let fx: BusFixture;
    let running: RunningConsumer[] = [];
    const run = Math.random().toString(36).slice(2, 8);
    let testNo = 0;
    // Fresh categories (hence fresh topics and streams) and consumer names for every test.
    let cat: { a: string; b: string; name: (n: string) => string };

    before(async () => {
      fx = await make();
    });
    beforeEach(() => {
      const t = `t${run}x${++testNo}`;
      cat = { a: `${t}a`, b: `${t}b`, name: (n) => `${t}-${n}` };
    });
    afterEach(async () => {
      await Promise.all(running.map((r) => r.stop()));
      running = [];
    });
    after(async () => {
      await fx?.bus.close();
      await fx?.cleanup();
    });

    const start = async (c: Consumer) => {
      const r = await fx.bus.start(c);
      running.push(r);
      return r;
    };
    const streams = (category: string, count: number) => Array.from({ length: count }, (_, i) => `${category}-s${i}`);

    it('delivers every event of its categories (catch-up, then live), none of others, in stream order', async () => {
      const a = streams(cat.a, 3);
      const b = streams(cat.b, 2);
      const mixed = [a[0], b[0], a[1], b[1], a[2]];
      const caughtUp = await appendRound(fx.eventStore, mixed, 3, 0, cat.a);
      const c = recorder(cat.name('main'), [cat.a]);
      await start(c);
      const live = await appendRound(fx.eventStore, mixed, 2, 3, cat.a);
      const wanted = [...caughtUp, ...live];
      await waitUntil(() => missing(wanted, c.ids()) === 0, () => `${wanted.length} events of ${cat.a}; missing ${missing(wanted, c.ids())}`);
      // A marker appended after everything else: once it arrived, any stray event of the other
      // category would have arrived too.
      await appendRound(fx.eventStore, [b[0]], 1, 5);
      const [marker] = await appendRound(fx.eventStore, [a[0]], 1, 5);
      await waitUntil(() => c.ids().has(marker), () => 'the marker event');
      expect(c.seen.filter((e) => categoryOf(e.streamId) !== cat.a)).to.deep.equal([]);
      expectPerStreamOrder(c.seen);
    });

    it('resumes after a stop without missing events and without redelivering them all', async () => {
      const a = streams(cat.a, 2);
      const first = await appendRound(fx.eventStore, a, 5);
      const c1 = recorder(cat.name('resume'), [cat.a]);
      const r1 = await start(c1);
      await waitUntil(() => missing(first, c1.ids()) === 0, () => `first ${first.length} events`);
      await r1.stop();
      const whileStopped = await appendRound(fx.eventStore, a, 5, 5);
      const c2 = recorder(cat.name('resume'), [cat.a]);
      await start(c2);
      await waitUntil(() => missing(whileStopped, c2.ids()) === 0, () => `events appended while stopped; missing ${missing(whileStopped, c2.ids())}`);
      const redelivered = first.filter((id) => c2.ids().has(id)).length;
      expect(redelivered, 'events redelivered after restart').to.be.lessThan(first.length / 2);
      expectPerStreamOrder([...c1.seen, ...c2.seen]);
    });

    it('retries a handler that throws, then continues with the stream', async () => {
      const [s] = streams(cat.a, 1);
      const ids = await appendRound(fx.eventStore, [s], 3);
      const attempts = new Map<string, number>();
      const handled: RecordedEvent[] = [];
      await start({
        name: cat.name('retry'),
        categories: [cat.a],
        async handle(e) {
          const n = (attempts.get(e.id) ?? 0) + 1;
          attempts.set(e.id, n);
          if (e.id === ids[1] && n <= 2) throw new Error(`planned failure ${n}`);
          handled.push(e);
        },
      });
      await waitUntil(() => missing(ids, new Set(handled.map((e) => e.id))) === 0, () => `all 3 events handled (attempts: ${[...attempts.values()]})`);
      expect(attempts.get(ids[1])).to.be.at.least(3);
      expectPerStreamOrder(handled);
    });

    it('skips an event whose handler always fails (dead letter) and keeps going', async () => {
      const [s] = streams(cat.a, 1);
      const ids = await appendRound(fx.eventStore, [s], 3);
      let poisonAttempts = 0;
      const c = recorder(cat.name('dlq'), [cat.a]);
      await start({
        ...c,
        async handle(e) {
          if (e.id === ids[1]) {
            poisonAttempts++;
            throw new Error('always fails');
          }
          await c.handle(e);
        },
      });
      await waitUntil(() => c.ids().has(ids[2]), () => 'the event after the poisoned one');
      expect(poisonAttempts).to.be.at.least(2);
      expect(c.ids().has(ids[0])).to.equal(true);
    });

    it('records the dead letter (event, error, attempts, first and last failure) before moving on, even when recording fails at first', async () => {
      const [s] = streams(cat.a, 1);
      const ids = await appendRound(fx.eventStore, [s], 3);
      const c = recorder(cat.name('dlq-record'), [cat.a]);
      fx.deadLetters.failing = 2;
      const startedAt = Date.now();
      await start({
        ...c,
        async handle(e) {
          if (e.id === ids[1]) throw new Error(`poisoned ${e.id}`);
          await c.handle(e);
        },
      });
      await waitUntil(() => c.ids().has(ids[2]), () => 'the event after the poisoned one');
      const letters = fx.deadLetters.recorded.filter((l) => l.consumer === cat.name('dlq-record'));
      expect(letters).to.have.length(1);
      const [letter] = letters;
      if (letter.kind === 'undecodable') throw new Error('expected the letter of an event');
      expect(letter.event.id).to.equal(ids[1]);
      expect(letter.event.streamId).to.equal(s);
      expect(letter.error).to.equal(`poisoned ${ids[1]}`);
      expect(letter.attempts).to.equal(5);
      expect(letter.firstFailedAt.getTime()).to.be.at.least(startedAt - 1);
      expect(letter.lastFailedAt.getTime()).to.be.greaterThan(letter.firstFailedAt.getTime());
      expect(fx.deadLetters.failing, 'the sink was retried until it stored the letter').to.equal(0);
    });

    it('never dead-letters an event because a server underneath is down: waits for it past maxAttempts, then handles it', async () => {
      const [s] = streams(cat.a, 1);
      const ids = await appendRound(fx.eventStore, [s], 3);
      let outage = 0;
      const c = recorder(cat.name('outage'), [cat.a]);
      await start({
        ...c,
        async handle(e) {
          // The read store restarting, for more calls than the policy's 5 attempts.
          if (e.id === ids[1] && ++outage <= 7) throw new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017');
          await c.handle(e);
        },
      });
      await waitUntil(() => c.ids().has(ids[2]), () => `the events after the outage (calls so far: ${outage})`, 30_000);
      expect(c.ids().has(ids[1]), 'the event that met the outage was handled, not skipped').to.equal(true);
      expect(fx.deadLetters.recorded.filter((l) => l.consumer === cat.name('outage'))).to.deep.equal([]);
      expectPerStreamOrder(c.seen);
    });

    it('gives every consumer (by name) all events', async () => {
      const a = streams(cat.a, 2);
      const ids = await appendRound(fx.eventStore, a, 4);
      const x = recorder(cat.name('x'), [cat.a]);
      const y = recorder(cat.name('y'), [cat.a]);
      await Promise.all([start(x), start(y)]);
      await waitUntil(() => missing(ids, x.ids()) + missing(ids, y.ids()) === 0, () => `both consumers to see ${ids.length} events`);
      expectPerStreamOrder(x.seen);
      expectPerStreamOrder(y.seen);
    });
  });
}
