import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type ISocketFactory } from 'kafkajs';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { KafkaBus } from '../../infra/bus/kafka.js';
import { SqliteCheckpointStore } from '../../infra/checkpoints/sqlite.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { Logger } from '../../ports/logger.js';
import { appendRound, expectPerStreamOrder, waitUntil } from '../contract/bus.contract.js';

/*
 * What this covers: the relay and a consumer, both started while Kafka is unreachable, keep
 * retrying (and say so), then publish and deliver everything once it is reachable; then a
 * second outage in mid-run (every connection reset, new ones refused) with events appended
 * during it, and again nothing is lost.
 *
 * How the outage is made: a TCP proxy per broker, in this process. A proxy on the bootstrap
 * address alone would not cut anything after the first metadata answer, because the broker
 * advertises its own address and clients connect there directly. So our client gets a
 * kafkajs `socketFactory` that sends every connection (bootstrap and advertised addresses
 * alike) through the proxy of that broker. Closing a proxy resets its connections (RST, so
 * the client sees ECONNRESET) and stops listening (new connections get ECONNREFUSED): real
 * kernel-level failures through kafkajs' real code paths. The broker itself keeps running
 * (it is shared); a silent partition (no RST, only timeouts) is not simulated here.
 */

class TcpProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  constructor(readonly port: number, readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.resetAndDestroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.resetAndDestroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function capturingLogger(lines: string[]): Logger {
  const log = (msg?: string) => void (msg && lines.push(msg));
  const logger: Logger = { debug() {}, info() {}, warn: (_o, m) => log(m), error: (_o, m) => log(m), child: () => logger };
  return logger;
}

const brokers = process.env.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean);

if (!brokers?.length) {
  console.log('SKIP Kafka outage test: KAFKA_BROKERS is not set');
} else {
  describe('Kafka bus: broker unreachable at start and in mid-run', function () {
    this.timeout(90_000);
    const run = Math.random().toString(36).slice(2, 8);
    const prefix = `outage${run}`;
    const category = `o${run}`;
    const proxies = new Map<string, TcpProxy>();
    const logs: string[] = [];
    let dir: string;
    let store: SqliteEventStore;
    let bus: KafkaBus;

    before(async () => {
      // Every address a client may dial: the bootstrap list and what the cluster advertises.
      const admin = new Kafka({ clientId: 'outage-probe', brokers, logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const { brokers: advertised } = await admin.describeCluster();
      await admin.disconnect();
      const addresses = [...brokers, ...advertised.map((b) => `${b.host}:${b.port}`)];
      for (const address of new Set(addresses)) {
        const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
        proxies.set(address, new TcpProxy(await freePort(), { host, port }));
      }
      dir = mkdtempSync(join(tmpdir(), 'kafka-outage-'));
      store = new SqliteEventStore(join(dir, 'events.db'));
    });

    after(async () => {
      await bus?.close();
      await Promise.all([...proxies.values()].map((p) => p.close()));
      await store?.close();
      rmSync(dir, { recursive: true, force: true });
      const admin = new Kafka({ clientId: 'outage-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
      try {
        await admin.connect();
        const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
        if (topics.length) await admin.deleteTopics({ topics });
        await admin.deleteGroups([`${prefix}.reader`]);
      } catch (err) {
        console.warn(`kafka outage test: cleanup of ${prefix}.* failed: ${(err as Error).message}`);
      } finally {
        await admin.disconnect();
      }
    });

    const networkUp = () => Promise.all([...proxies.values()].map((p) => p.open()));
    const networkDown = () => Promise.all([...proxies.values()].map((p) => p.close()));

    it('retries while Kafka is unreachable, then catches up with nothing lost', async () => {
      const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
        const proxy = proxies.get(`${host}:${port}`);
        if (!proxy) throw new Error(`outage test: no proxy for ${host}:${port}`);
        return net.connect({ host: '127.0.0.1', port: proxy.port }, onConnect);
      };
      bus = new KafkaBus({
        brokers,
        clientId: 'outage-test',
        topicPrefix: prefix,
        logger: capturingLogger(logs),
        kafkaLogLevel: logLevel.NOTHING,
        relay: { eventStore: store, checkpoints: new SqliteCheckpointStore(store.db) },
        client: { socketFactory, retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 2 } },
        // A member cut off by the outage cannot leave its group; the next join waits for its
        // session to expire, so the broker's minimum session timeout keeps the test short.
        consumer: { maxWaitTimeInMs: 250, sessionTimeout: 6_000, rebalanceTimeout: 6_000, heartbeatInterval: 500 },
        reconnectBaseMs: 100,
        reconnectMaxMs: 1_000,
      });
      const seen: RecordedEvent[] = [];
      const ids = () => new Set(seen.map((e) => e.id));
      const streams = [0, 1, 2].map((i) => `${category}-s${i}`);

      // 1. Unreachable from the start: nothing may be published, skipped or delivered.
      bus.startRelay();
      await bus.start({ name: 'reader', categories: [category], handle: async (e) => void seen.push(e) });
      const first = await appendRound(store, streams, 5);
      const count = (prefix: string) => logs.filter((l) => l.startsWith(prefix)).length;
      await waitUntil(
        () => count('kafka relay: publishing failed') >= 2 && count('kafka consumer failed') >= 2,
        () => `repeated retry warnings from relay and consumer (got: ${logs.join(' | ')})`,
        15_000,
      );
      const down = bus.relayStatus()!;
      expect(down).to.include({ connected: false, position: 0 });
      expect(down.failures).to.be.at.least(2);
      expect(down.lastError).to.be.a('string');
      expect(seen).to.have.length(0);
      expect((await bus.health()).ok).to.equal(false);

      // 2. Reachable: everything appended during the outage arrives.
      await networkUp();
      await waitUntil(() => first.every((id) => ids().has(id)), () => `${first.length} events after Kafka came up (have ${ids().size})`);
      expect(bus.relayStatus()).to.include({ connected: true, position: await store.headPosition() });

      // 3. Mid-run outage: connections reset, events appended meanwhile, then recovery.
      await networkDown();
      const second = await appendRound(store, streams, 5, 5);
      await waitUntil(() => bus.relayStatus()!.failures > 0, () => 'the relay to notice the outage', 20_000);
      expect(bus.relayStatus()!.position).to.be.lessThan(await store.headPosition());
      await networkUp();
      await waitUntil(() => second.every((id) => ids().has(id)), () => `${second.length} events after the second outage (have ${ids().size})`);
      expect(bus.relayStatus()!.position).to.equal(await store.headPosition());
      expectPerStreamOrder(seen);
      expect((await bus.health()).ok).to.equal(true);
    });
  });
}
