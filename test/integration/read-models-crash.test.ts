/**
 * Issue 30: the embedded read models on disk survive a SIGKILL inside a projection batch. The
 * service runs as a child process under mixed load (the soak's operations); a preloaded hook
 * (test/support/kill-in-projection-batch.ts) kills it inside a batch, after the batch's writes and
 * checkpoint and before its commit. The service restarts on the same data and catches up; then
 * every collection of its read-models.db must equal a rebuild of every projector from the same
 * log into a new file: no event applied twice, none lost.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { waitUntil } from '../support/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { prng, runOp, setUpActor, type Acknowledged, type Actor, type OpKind } from '../soak/mix.js';
import { newMcpTally } from '../soak/mcp-calls.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { UpcastingEventStore } from '../../infra/event-store/upcasting.js';
import { allUpcastersWith } from '../../domain/upcasters.js';
import { loadOrCreateKey } from '../../infra/auth/key-material.js';
import { SealedBox } from '../../infra/auth/sealed-box.js';
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import { ProjectionRunner } from '../../app/projection-runner.js';
import { allProjectors } from '../../projections/index.js';
import { createLogger } from '../../infra/logger/pino.js';
import type { Doc } from '../../ports/read-store.js';

const hook = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'kill-in-projection-batch.ts');
/** The soak's operations that need no MCP server. */
const KINDS: OpKind[] = ['edit_flow', 'sync_run', 'async_run', 'send_message', 'doc_write', 'doc_search', 'memory_save'];

async function dump(file: string): Promise<Record<string, Doc[]>> {
  const store = new SqliteReadStore(file);
  try {
    const out: Record<string, Doc[]> = {};
    for (const name of await store.listCollections()) out[name] = await store.collection(name).find({}, { sort: { _id: 1 } });
    return out;
  } finally {
    await store.close();
  }
}

describe('embedded read models killed inside a projection batch (issue 30)', function () {
  this.timeout(240_000);
  let dataDir: string;
  let receiver: WebhookReceiver;
  let service: ServiceProcess | null = null;
  const operator = `operator-${randomBytes(4).toString('hex')}@example.test`;
  const secret = `rm-${randomBytes(8).toString('hex')}`;
  const env = () => ({
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    ADMIN_EMAILS: operator,
    RATE_LIMIT_AUTH_PER_MINUTE: '100000',
    ALLOW_PRIVATE_NETWORK: 'true',
  });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-rmcrash-'));
    receiver = await startWebhookReceiver(secret, () => ({ status: 200 }));
  });
  after(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes from its last committed batch and then equals a rebuild from the log', async () => {
    service = await startServiceProcess(env(), [], 60_000, ['--import', hook]);
    const admin = await registerUser(service.baseUrl, { email: operator });
    const actors: Actor[] = [];
    for (let i = 0; i < 3; i++) actors.push(await setUpActor(service.baseUrl, i, receiver.url, secret));
    const acked: Acknowledged = { flowEdits: new Map(), asyncRuns: [], documents: [], memories: [], messagesTo: new Map() };
    const noMcp = { serverId: 'none', owner: actors[0].user, tally: newMcpTally() };
    let stop = false;
    let acknowledged = 0;
    const first = service;
    const load = Promise.all(
      actors.map(async (actor, i) => {
        const rand = prng(1000 + i);
        while (!stop) {
          try {
            await runOp(KINDS[Math.floor(rand() * KINDS.length)], first.baseUrl, actor, noMcp, acked, rand);
            acknowledged++;
          } catch {
            if (first.child.signalCode !== null || first.child.exitCode !== null) return;
          }
        }
      }),
    );
    await waitUntil('operations acknowledged under load', async () => acknowledged >= 150, 60_000);
    first.child.kill('SIGUSR2');
    const exit = await Promise.race([first.exited, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
    stop = true;
    await load;
    expect(exit, 'the service died after being armed').to.not.equal(null);
    expect(exit!.signal).to.equal('SIGKILL');
    expect(first.stderr()).to.include('KILLED INSIDE A PROJECTION BATCH');

    service = await startServiceProcess(env(), [], 60_000);
    await waitUntil('every projection caught up after the restart', async () => {
      const res = await call(service!.baseUrl, 'GET', '/admin/projections', undefined, admin.auth);
      expect(res.status, res.text).to.equal(200);
      const projections = res.body.projections as Array<{ lag: number; state: string; name: string }>;
      expect(projections.filter((p) => p.state !== 'running').map((p) => p.name)).to.deep.equal([]);
      return projections.every((p) => p.lag === 0);
    }, 60_000);
    service.child.kill('SIGTERM');
    await service.exited;
    service = null;

    const served = await dump(join(dataDir, 'read-models.db'));
    const rebuiltDir = mkdtempSync(join(tmpdir(), 'flowsvc-rmrebuild-'));
    try {
      const raw = new SqliteEventStore(join(dataDir, 'events.db'));
      const box = new SealedBox(loadOrCreateKey(undefined, dataDir, 'encryption.key'));
      const events = new UpcastingEventStore(raw, allUpcastersWith({ sealBox: (plaintext) => box.seal(plaintext) }));
      const fresh = new SqliteReadStore(join(rebuiltDir, 'read-models.db'));
      const runner = new ProjectionRunner(events, fresh, allProjectors, createLogger('silent'));
      await runner.start();
      await waitUntil('the rebuild caught up', async () => (await runner.status()).every((p) => p.lag === 0), 60_000);
      await runner.stop();
      await fresh.close();
      await raw.close();
      const rebuilt = await dump(join(rebuiltDir, 'read-models.db'));
      // Not compared: what depends on how events fell into batches, not on the events. A tenant's
      // memory generation (memory_tenants, and the memories' `stamp`) counts batches, to tell a
      // search index which memories changed since it was built.
      delete served.memory_tenants;
      delete rebuilt.memory_tenants;
      const unstamped = (docs: Doc[] = []) => docs.map(({ stamp: _stamp, ...rest }) => rest);
      served.memories = unstamped(served.memories);
      rebuilt.memories = unstamped(rebuilt.memories);
      // The last process records its own stop after its projectors stopped: the served read model
      // cannot hold that one event, the rebuild does.
      const last = rebuilt.workers?.find((w) => w.stoppedAt !== null && served.workers?.find((s) => s._id === w._id)?.stoppedAt === null);
      if (last) {
        rebuilt.workers = rebuilt.workers.filter((w) => w !== last);
        served.workers = served.workers.filter((w) => w._id !== last._id);
      }
      expect(Object.keys(served).sort()).to.deep.equal(Object.keys(rebuilt).sort());
      let documents = 0;
      for (const name of Object.keys(rebuilt)) {
        expect(served[name], `collection ${name}`).to.deep.equal(rebuilt[name]);
        documents += rebuilt[name].length;
      }
      console.log(`      ${acknowledged} operations acknowledged before the kill; ${Object.keys(rebuilt).length} collections, ${documents} documents equal to the rebuild`);
      expect(documents).to.be.greaterThan(100);
    } finally {
      rmSync(rebuiltDir, { recursive: true, force: true });
    }
  });
});
