import { expect } from 'chai';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { call } from '../support/http.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * Relay failover: two worker processes both able to relay, one holding the relay lease, an API
 * and a projector; load through the API (probes created and incremented without pause); the
 * relaying worker is SIGKILLed. The other must take over within RELAY_FAILOVER_MS, and in the end
 * every event of the log is on Kafka, every probe was acknowledged exactly once by a worker (the
 * consumer absorbed the duplicates), and every read model is right.
 *
 * Duplicates: a relay that dies between the broker's acknowledgement and its checkpoint write
 * leaves its successor to publish those events again. That window is a few milliseconds, so to
 * make it certain rather than lucky, the test moves the stored relay checkpoint back by
 * REWIND positions right after the kill, exactly the state such a death leaves behind.
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP relay failover: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

const FAILOVER_MS = 6_000;
const REWIND = 25;

interface RelayHealth {
  state: 'leader' | 'standby' | 'none';
  token: number | null;
  position: number | null;
}

async function relayOf(p: ServiceProcess): Promise<RelayHealth> {
  const res = await call(p.baseUrl, 'GET', '/health').catch(() => null);
  const detail: string = res?.body?.ports?.bus?.detail ?? '';
  const leader = /relay leader \(lease token (\d+)\) at (\d+)/.exec(detail);
  if (leader) return { state: 'leader', token: Number(leader[1]), position: Number(leader[2]) };
  return { state: /relay standby/.test(detail) ? 'standby' : 'none', token: null, position: null };
}

(distributed ? describe : describe.skip)('relay failover between workers (Kafka, MongoDB lease)', function () {
  this.timeout(240_000);
  let group: DistributedProcessGroup | null = null;
  let prefix = '';
  after(async () => {
    await group?.stop();
    const admin = new Kafka({ clientId: 'failover-cleanup', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING }).admin();
    try {
      await admin.connect();
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
      if (topics.length) await admin.deleteTopics({ topics });
    } catch (err) {
      console.warn(`relay failover: cleanup of ${prefix}.* failed: ${(err as Error).message}`);
    } finally {
      await admin.disconnect();
    }
  });

  it('another worker relays within RELAY_FAILOVER_MS of the leader being killed; no event lost, duplicates absorbed', async () => {
    group = new DistributedProcessGroup('failover');
    const env = group.env({ RELAY_FAILOVER_MS: String(FAILOVER_MS) });
    prefix = env.KAFKA_TOPIC_PREFIX;
    const [api, , w1, w2] = await group.start(env, ['api', 'projector', 'worker', 'worker']);
    const workers = [w1, w2];

    // Exactly one worker relays.
    const states = await waitUntil('one worker to take the relay lease', async () => {
      const s = await Promise.all(workers.map(relayOf));
      return s.filter((r) => r.state === 'leader').length === 1 && s.some((r) => r.state === 'standby') ? s : null;
    }, 30_000);
    const leader = workers[states.findIndex((s) => s.state === 'leader')];
    const survivor = workers.find((w) => w !== leader)!;

    // Load: two writers creating and incrementing probes without pause until told to stop.
    const probes = new Map<string, number>();
    let writing = true;
    let failures = 0;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const created = await call(api.baseUrl, 'POST', '/probes', { name: `failover ${n}.${i} ${group!.id}` });
        if (created.status !== 201) {
          failures++;
          continue;
        }
        const id = created.body.probe.id as string;
        probes.set(id, 0);
        const inc = await call(api.baseUrl, 'POST', `/probes/${id}/increment`, { by: i + 1 });
        if (inc.status === 200) probes.set(id, i + 1);
        else failures++;
      }
    };
    const writers = [writer(1), writer(2)];

    // Kill the leader once it has published a good part of the load.
    await waitUntil('the leader to publish some load', async () => ((await relayOf(leader)).position ?? 0) > 3 * REWIND && probes.size > 20, 60_000);
    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    await leader.exited;
    const mongo = await MongoClient.connect(process.env.MONGODB_URL!);
    const checkpoints = mongo.db(env.MONGODB_DB).collection<{ _id: string; position: number }>('_checkpoints');
    const stored = (await checkpoints.findOne({ _id: 'relay:kafka' }))!.position;
    await checkpoints.updateOne({ _id: 'relay:kafka' }, { $set: { position: stored - REWIND } });
    await mongo.close();
    expect((await relayOf(survivor)).state, 'the rewind happened before the takeover (the lease has not expired yet)').to.equal('standby');

    const takeover = await waitUntil('the surviving worker to relay', async () => {
      const r = await relayOf(survivor);
      return r.state === 'leader' && (r.position ?? 0) > stored ? r : null;
    }, 3 * FAILOVER_MS);
    const takeoverMs = Date.now() - killedAt;
    expect(takeover.token, 'a new lease tenure').to.be.at.least(2);
    expect(takeoverMs, `publishing again within RELAY_FAILOVER_MS (${FAILOVER_MS} ms)`).to.be.below(FAILOVER_MS);

    // More load under the new relay, then stop.
    const countAtTakeover = probes.size;
    await waitUntil('load under the new relay', async () => probes.size > countAtTakeover + 20, 60_000);
    writing = false;
    await Promise.all(writers);
    expect(failures, 'API writes failed during the failover').to.equal(0);

    // Every probe acknowledged by a worker (through Kafka), with the right value in the read model.
    await waitUntil(`all ${probes.size} probes acknowledged`, async () => {
      for (const [id, value] of probes) {
        const probe = (await call(api.baseUrl, 'GET', `/probes/${id}`)).body.probe;
        if (!probe?.acknowledgedBy || probe.value !== value) return false;
      }
      return true;
    }, 120_000);

    // From the log itself: each probe acknowledged exactly once although some ProbeCreated arrived twice.
    const db = new Database(join(group.dataDir, 'events.db'), { readonly: true, fileMustExist: true });
    const logged = db.prepare("SELECT id, stream_id AS streamId, type FROM events WHERE category = 'probe' ORDER BY position").all() as Array<{ id: string; streamId: string; type: string }>;
    db.close();
    const acks = new Map<string, number>();
    for (const e of logged) if (e.type === 'ProbeAcknowledged') acks.set(e.streamId, (acks.get(e.streamId) ?? 0) + 1);
    for (const id of probes.keys()) expect(acks.get(`probe-${id}`), `ProbeAcknowledged events of probe-${id}`).to.equal(1);

    // And from Kafka: every event of the log was published, some of them twice.
    const kafka = new Kafka({ clientId: 'failover-verify', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING });
    const reader = kafka.consumer({ groupId: `${prefix}.verify`, maxWaitTimeInMs: 250 });
    const published: string[] = [];
    await reader.connect();
    await reader.subscribe({ topics: [`${prefix}.events.probe`], fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void published.push(message.headers!['event-id']!.toString()) });
    const wanted = new Set(logged.map((e) => e.id));
    try {
      await waitUntil(`every one of ${wanted.size} probe events on Kafka`, async () => [...wanted].every((id) => published.includes(id)), 60_000);
    } finally {
      await reader.disconnect();
    }
    const duplicates = published.length - new Set(published).size;
    expect(duplicates, 'events published twice after the takeover').to.be.at.least(1);
    console.log(
      `      relay failover: leader killed at checkpoint ${stored} (rewound by ${REWIND}), survivor publishing after ${takeoverMs} ms ` +
        `(RELAY_FAILOVER_MS ${FAILOVER_MS}); ${probes.size} probes, ${wanted.size} probe events, ${published.length} messages on Kafka ` +
        `(${duplicates} duplicates), each probe acknowledged once`,
    );
  });
});
