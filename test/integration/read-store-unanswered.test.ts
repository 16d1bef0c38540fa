import { expect } from 'chai';
import net from 'node:net';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import { unavailableDependency } from '../../infra/availability/classify.js';

/**
 * FerretDB 1.24, just restarted under load, left a few commands unanswered for good: the
 * projections that sent them stood `running` and still until the end of the faulted soak (issue
 * 37). Here a proxy on loopback in front of the real server stops passing answers back, the way
 * that looked from the client: the command must fail after the store's socket timeout, as a
 * dependency that did not answer, and the store must serve again once answers flow.
 */
function answerHoldingProxy(target: URL): Promise<{ url: string; hold(on: boolean): void; close(): Promise<void> }> {
  let holding = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 27017), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    // An answer that arrives while holding is never delivered: the command waits for it for ever.
    upstream.on('data', (chunk) => {
      if (!holding) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      resolve({
        url: `mongodb://127.0.0.1:${port}/`,
        hold: (on) => (holding = on),
        close: async () => {
          for (const s of sockets) s.destroy();
          await new Promise((r) => server.close(r));
        },
      });
    });
  });
}

if (process.env.MONGODB_URL) {
  describe('read store on MongoDB: a command the server never answers', function () {
    this.timeout(60_000);
    const db = `unanswered_${Math.random().toString(36).slice(2, 8)}`;
    let proxy: Awaited<ReturnType<typeof answerHoldingProxy>>;
    let store: MongoReadStore;
    before(async () => {
      proxy = await answerHoldingProxy(new URL(process.env.MONGODB_URL!));
      store = await MongoReadStore.connect(proxy.url, db, { socketTimeoutMs: 1_500 });
    });
    after(async () => {
      proxy?.hold(false);
      await store?.collection('things').drop().catch(() => undefined);
      await store?.close();
      await proxy?.close();
    });

    it('fails after the socket timeout as an unavailable read store, then serves again', async () => {
      const things = store.collection<{ _id: string; n: number }>('things');
      await things.insertOne({ _id: 'a', n: 1 });
      proxy.hold(true);
      const started = Date.now();
      const failure = await things.updateOne({ _id: 'a' }, { $set: { n: 2 } }).then(() => null, (err: Error) => err);
      const waited = Date.now() - started;
      expect(failure, 'the command failed instead of waiting for ever').to.be.instanceOf(Error);
      expect(waited).to.be.lessThan(15_000);
      expect(unavailableDependency(failure)).to.equal('read store');
      proxy.hold(false);
      const deadline = Date.now() + 20_000;
      let found: { n: number } | null = null;
      while (!found && Date.now() < deadline) found = await things.findOne({ _id: 'a' }).catch(() => null);
      expect(found).to.not.equal(null);
      await things.updateOne({ _id: 'a' }, { $set: { n: 3 } });
      expect((await things.findOne({ _id: 'a' }))?.n).to.equal(3);
    });
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('read store on MongoDB: a command the server never answers', () => {
    it('needs a server', () => {
      throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
    });
  });
} else {
  console.log('SKIP unanswered MongoDB command test: MONGODB_URL is not set');
}
