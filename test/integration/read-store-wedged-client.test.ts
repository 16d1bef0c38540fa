import { expect } from 'chai';
import { MongoNetworkError } from 'mongodb';
import { MongoReadStore } from '../../infra/read-store/mongo.js';

/**
 * The faulted soak (issue 37) met a driver client that kept FerretDB `Unknown` for minutes after
 * PostgreSQL and FerretDB restarted, though a new client reached it at once: every read model
 * write failed until the service was restarted. The watchdog (infra/read-store/mongo-watchdog.ts)
 * replaces such a client. The wedge is made here the way it looked there: the server's monitor
 * stops checking, and the server is left unknown with the error of a closed connection.
 */
interface DriverServer {
  monitor: { close(): void } | null;
  description: { hostAddress: unknown; constructor: new (address: unknown, hello: undefined, options: { error: Error }) => unknown };
  emit(event: string, description: unknown): void;
}

function wedge(store: MongoReadStore): void {
  const client = (store as unknown as { client: { topology: { s: { servers: Map<string, DriverServer> } } } }).client;
  for (const server of client.topology.s.servers.values()) {
    server.monitor?.close();
    const Description = server.description.constructor;
    server.emit('descriptionReceived', new Description(server.description.hostAddress, undefined, { error: new MongoNetworkError('connection 1 to the server closed') }));
  }
}

if (process.env.MONGODB_URL) {
  describe('read store on MongoDB: a wedged driver client is replaced', function () {
    this.timeout(60_000);
    const db = `wedge_${Math.random().toString(36).slice(2, 8)}`;
    let store: MongoReadStore;
    const logged: string[] = [];
    before(async () => {
      store = await MongoReadStore.connect(process.env.MONGODB_URL!, db, { wedgedAfterMs: 1_500, watchdogEveryMs: 250, log: (message) => logged.push(message) });
    });
    after(async () => {
      await store?.collection('things').drop().catch(() => undefined);
      await store?.close();
    });

    it('serves again, without a restart, once a fresh client reaches the server', async () => {
      const things = store.collection<{ _id: string; n: number }>('things');
      await things.insertOne({ _id: 'a', n: 1 });
      wedge(store);
      // Wedged: the client no longer selects the server it is connected to (an operation waiting
      // when the client is replaced fails with the old client's closing).
      const failure = await things.findOne({ _id: 'a' }).then(() => null, (err: Error) => err);
      expect(failure?.name).to.be.oneOf(['MongoServerSelectionError', 'MongoTopologyClosedError']);
      const deadline = Date.now() + 20_000;
      let found: { n: number } | null = null;
      while (!found && Date.now() < deadline) {
        found = await things.findOne({ _id: 'a' }).catch(() => null);
        if (!found) await new Promise((r) => setTimeout(r, 200));
      }
      expect(found, 'the store answered again').to.deep.include({ n: 1 });
      await things.updateOne({ _id: 'a' }, { $set: { n: 2 } });
      expect(await store.checkpoints.get('nothing')).to.equal(null);
      expect((await things.findOne({ _id: 'a' }))?.n).to.equal(2);
      expect(logged.some((m) => /wedged/.test(m)), logged.join('; ')).to.equal(true);
    });

    it('leaves a client alone whose server is known', async () => {
      const before = logged.length;
      await new Promise((r) => setTimeout(r, 2_000));
      await store.collection('things').findOne({ _id: 'a' });
      expect(logged.length).to.equal(before);
    });
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('read store on MongoDB: a wedged driver client', () => {
    it('needs a server', () => {
      throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
    });
  });
} else {
  console.log('SKIP wedged MongoDB client test: MONGODB_URL is not set');
}
