import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DocumentLeaseStore } from '../../infra/bus/relay-lease.js';
import { RelayLeader, type Led } from '../../infra/bus/relay-leader.js';
import { SqliteLeaseStore } from '../../infra/checkpoints/sqlite-lease.js';
import type { Lease, LeaseStore } from '../../ports/lease.js';
import type { Logger } from '../../ports/logger.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import { waitUntil } from './bus.contract.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

interface LeaseFixture {
  /** Two handles on one lease store (two processes); `b` reads its own clock when given one. */
  a: LeaseStore;
  b: LeaseStore;
  cleanup(): Promise<void>;
}

/** The relay lease's contract, run on every adapter (relay-lease.ts, sqlite-lease.ts). */
function leaseContract(label: string, make: (now: () => number, nowOfB?: () => number) => Promise<LeaseFixture>) {
  describe(`relay lease contract: ${label}`, function () {
    this.timeout(20_000);
    let t = 1_000_000;
    let fx: LeaseFixture;
    const name = `relay:test:${Math.random().toString(36).slice(2, 8)}`;
    before(async () => {
      fx = await make(() => t);
    });
    after(async () => fx?.cleanup());

    it('one holder at a time; renewal keeps the token; a takeover after expiry bumps it; release lets the next in at once', async () => {
      const first = (await fx.a.acquire(name, 'worker-1', 1_000)) as Lease;
      expect(first).to.deep.equal({ holder: 'worker-1', token: 1, expiresAt: t + 1_000 });
      expect(await fx.b.acquire(name, 'worker-2', 1_000), 'held by worker-1').to.equal(null);

      t += 600;
      expect(await fx.a.acquire(name, 'worker-1', 1_000)).to.deep.equal({ holder: 'worker-1', token: 1, expiresAt: t + 1_000 });
      t += 900;
      expect(await fx.b.acquire(name, 'worker-2', 1_000), 'renewed 900 ms ago for 1000').to.equal(null);

      t += 101;
      expect(await fx.b.acquire(name, 'worker-2', 1_000)).to.deep.equal({ holder: 'worker-2', token: 2, expiresAt: t + 1_000 });
      expect(await fx.a.acquire(name, 'worker-1', 1_000), 'the old holder cannot renew a lease it lost').to.equal(null);
      expect(await fx.a.read(name)).to.deep.equal({ holder: 'worker-2', token: 2, expiresAt: t + 1_000 });

      await fx.a.release(name, 'worker-1');
      expect(await fx.a.acquire(name, 'worker-1', 1_000), "releasing someone else's lease does nothing").to.equal(null);
      await fx.b.release(name, 'worker-2');
      expect((await fx.a.acquire(name, 'worker-1', 1_000))?.token).to.equal(3);
    });

    it('lets exactly one of many concurrent takers win', async () => {
      const other = `${name}:race`;
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? fx.a : fx.b).acquire(other, `w${i}`, 5_000)));
      const winners = results.filter((r): r is Lease => r !== null);
      expect(winners).to.have.length(1);
      expect(winners[0].token).to.equal(1);
    });

    it("a host whose clock jumps 10 minutes ahead takes the lease early: the old leader's relay publishes no batch after that", async () => {
      const skewed = await make(() => Date.now(), () => Date.now() + 600_000);
      const leaseName = `relay:skew:${Math.random().toString(36).slice(2, 8)}`;
      let takenAt = Infinity;
      const jumpedStore: LeaseStore = {
        acquire: async (...a) => {
          const lease = await skewed.b.acquire(...a);
          if (lease && takenAt === Infinity) takenAt = performance.now();
          return lease;
        },
        release: (...a) => skewed.b.release(...a),
        read: (...a) => skewed.b.read(...a),
      };
      const steady = publishingRelay();
      const jumped = publishingRelay();
      // F = 3 s: the steady leader renews every 500 ms, so without a fence by token it would go on
      // publishing for up to 500 ms after the takeover.
      const leaders = [
        new RelayLeader(steady, { leases: skewed.a, holder: 'steady', failoverMs: 3_000, logger: silent, leaseName }),
        new RelayLeader(jumped, { leases: jumpedStore, holder: 'jumped', failoverMs: 3_000, logger: silent, leaseName }),
      ];
      steady.fence = leaders[0].fence;
      jumped.fence = leaders[1].fence;
      try {
        leaders[0].start();
        await waitUntil(() => steady.published.length >= 3, () => 'the steady leader to publish');
        leaders[1].start();
        await waitUntil(() => jumped.published.length >= 3, () => 'the jumped host to take over and publish');
        await waitUntil(() => !steady.running, () => "the old leader's relay to be stopped");
        const late = steady.published.filter((checkedAt) => checkedAt > takenAt);
        expect(late, 'batches the old leader published after the takeover').to.deep.equal([]);
        expect(leaders[1].status()).to.deep.include({ state: 'leader', token: 2 });
        expect(leaders[0].status()).to.deep.include({ state: 'standby' });
      } finally {
        await Promise.all(leaders.map((l) => l.stop()));
        await skewed.cleanup();
      }
    });
  });
}

/** A led relay that publishes a batch every 5 ms while running, each after its fence said yes (when the fence's read began). */
function publishingRelay(): Led & { running: boolean; published: number[]; fence: () => Promise<boolean> } {
  const relay = {
    running: false,
    published: [] as number[],
    fence: async () => false,
    loop: null as Promise<void> | null,
    start() {
      relay.running = true;
      relay.loop = (async () => {
        while (relay.running) {
          const checkedAt = performance.now();
          if (await relay.fence()) relay.published.push(checkedAt);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
    },
    async stop() {
      relay.running = false;
      await relay.loop;
    },
  };
  return relay;
}

leaseContract('SQLite (two connections to one file)', async (now, nowOfB) => {
  const dir = mkdtempSync(join(tmpdir(), 'lease-'));
  const [d1, d2] = [new Database(join(dir, 'state.db')), new Database(join(dir, 'state.db'))];
  for (const d of [d1, d2]) d.pragma('busy_timeout = 5000');
  return {
    a: new SqliteLeaseStore(d1, now),
    b: new SqliteLeaseStore(d2, nowOfB ?? now),
    async cleanup() {
      d1.close();
      d2.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

leaseContract('document collection (in memory)', async (now, nowOfB) => {
  const store = new MemoryReadStore();
  return { a: new DocumentLeaseStore(store.collection('_leases'), now), b: new DocumentLeaseStore(store.collection('_leases'), nowOfB ?? now), cleanup: () => store.close() };
});

if (process.env.MONGODB_URL) {
  leaseContract('document collection (MongoDB/FerretDB, two clients)', async (now, nowOfB) => {
    const db = `lease_${Math.random().toString(36).slice(2, 8)}`;
    const [s1, s2] = await Promise.all([MongoReadStore.connect(process.env.MONGODB_URL!, db), MongoReadStore.connect(process.env.MONGODB_URL!, db)]);
    return {
      a: new DocumentLeaseStore(s1.collection('_leases'), now),
      b: new DocumentLeaseStore(s2.collection('_leases'), nowOfB ?? now),
      async cleanup() {
        await s1.collection('_leases').drop();
        await Promise.all([s1.close(), s2.close()]);
      },
    };
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('relay lease contract: MongoDB', () => {
    it('needs a server', () => {
      throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
    });
  });
} else {
  console.log('SKIP relay lease contract on MongoDB: MONGODB_URL is not set');
}

/** A led relay that only records whether it runs. */
function fakeRelay(): Led & { running: boolean; starts: number } {
  return {
    running: false,
    starts: 0,
    start() {
      this.running = true;
      this.starts++;
    },
    async stop() {
      this.running = false;
    },
  };
}

describe('relay leader (election and fencing)', function () {
  this.timeout(20_000);

  it('runs the relay in exactly one of two processes; the other takes over when the leader stops renewing', async () => {
    const store = new DocumentLeaseStore(new MemoryReadStore().collection('_leases'));
    // A process that dies stops talking to the lease store: its calls never come back.
    let dead = false;
    const hung: Array<() => void> = [];
    const ofOne: LeaseStore = {
      acquire: (...a) => (dead ? new Promise((resolve) => hung.push(() => resolve(null))) : store.acquire(...a)),
      release: (...a) => (dead ? Promise.resolve() : store.release(...a)),
      read: (...a) => store.read(...a),
    };
    // The second process's refused asks, timed: one made a whole lease (failoverMs / 2) after it
    // started proves the leader renewed meanwhile, with no fixed wait.
    const refusedAt: number[] = [];
    const ofTwo: LeaseStore = {
      acquire: async (...a) => {
        const askedAt = Date.now();
        const lease = await store.acquire(...a);
        if (!lease) refusedAt.push(askedAt);
        return lease;
      },
      release: (...a) => store.release(...a),
      read: (...a) => store.read(...a),
    };
    const [r1, r2] = [fakeRelay(), fakeRelay()];
    const l1 = new RelayLeader(r1, { leases: ofOne, holder: 'one', failoverMs: 2_000, logger: silent });
    const l2 = new RelayLeader(r2, { leases: ofTwo, holder: 'two', failoverMs: 2_000, logger: silent });
    l1.start();
    await waitUntil(() => r1.running, () => 'the first process to lead');
    const standbyFrom = Date.now();
    l2.start();
    await waitUntil(() => refusedAt.some((at) => at > standbyFrom + 1_000), () => `the standby refused a whole lease after it started (refused at +${refusedAt.map((at) => at - standbyFrom).join(', +')} ms)`);
    expect([r1.running, r2.running]).to.deep.equal([true, false]);
    expect(l2.status()).to.deep.include({ state: 'standby' });

    const diedAt = Date.now();
    dead = true;
    await waitUntil(() => r2.running, () => 'the second process to take over');
    expect(Date.now() - diedAt, 'takeover within RELAY_FAILOVER_MS').to.be.below(2_000);
    expect(l1.mayPublish(), 'the dead leader is fenced by then').to.equal(false);
    hung.forEach((wake) => wake());
    await l1.stop();
    expect(l2.status()).to.deep.equal({ state: 'leader', holder: 'two', token: 2 });
    expect(l2.mayPublish()).to.equal(true);
    await l2.stop();
    expect(r2.running).to.equal(false);
    expect((await store.read('relay:kafka'))!.expiresAt, 'released on a graceful stop').to.equal(0);
  });

  it('fences a leader that cannot renew: it stops publishing before its lease could pass to anyone', async () => {
    const inner = new DocumentLeaseStore(new MemoryReadStore().collection('_leases'));
    let reachable = true;
    const flaky: LeaseStore = {
      acquire: (...a) => (reachable ? inner.acquire(...a) : Promise.reject(new Error('lease store unreachable'))),
      release: (...a) => inner.release(...a),
      read: (...a) => inner.read(...a),
    };
    const relay = fakeRelay();
    const leader = new RelayLeader(relay, { leases: flaky, holder: 'cut-off', failoverMs: 3_000, logger: silent });
    leader.start();
    await waitUntil(() => relay.running, () => 'the leader to start its relay');
    reachable = false;
    const cutAt = Date.now();
    await waitUntil(() => !leader.mayPublish(), () => 'the fence to close');
    const fencedAfter = Date.now() - cutAt;
    const { expiresAt } = (await inner.read('relay:kafka'))!;
    expect(Date.now(), 'fenced before the lease expired for the others').to.be.below(expiresAt);
    // Lease 1500 ms, renewed every 500, guard 300: fenced at most 1200 ms after the last renewal.
    expect(fencedAfter).to.be.below(1_500);
    await waitUntil(() => !relay.running, () => 'the relay to be stopped');
    await leader.stop();
  });
});
