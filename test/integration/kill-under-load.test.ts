/**
 * Every consumer survives SIGKILL at a random point under mixed load (issue 19 item 6).
 *
 * The service runs as a child process with every role (API, projections, run worker, webhook
 * deliveries, MCP reconnection, memory indexing, the Kafka relay in the distributed configuration).
 * The soak's workload (test/soak/mix.ts) runs against it; at seeded random moments the process is
 * killed with SIGKILL and started again on the same data. Operations in flight at a kill may fail
 * (they were never acknowledged); everything acknowledged must be there at the end:
 * - projections (documents, flows, memories on MongoDB-wire or SQLite): at least once, idempotent;
 * - run worker and recovery: every async run answered 202 completes;
 * - webhook deliveries: every message becomes one delivery, succeeded or recorded as failed;
 * - memory indexing: every acknowledged memory is found by a search for its own words;
 * - MCP reconnection: the server connected before the kills is reconnected without being asked, and
 *   tool calls answer after each restart.
 * The seed is printed; KILL_SEED=<seed> replays the same kill points and operations.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { mcpTestEnv } from '../support/mcp-servers.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes } from '../support/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { pick, prng, runOp, setUpActor, setUpMcp, type Acknowledged, type Actor } from '../soak/mix.js';
import { newMcpTally } from '../soak/mcp-calls.js';
import { verify, verifyFlows } from '../soak/verify.js';

const KILLS = 3;
const ACTORS = 4;

for (const mode of availableModes()) {
  describe(`every consumer survives SIGKILL under mixed load (${mode})`, function () {
    this.timeout(300_000);
    const seed = Number(process.env.KILL_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const id = randomBytes(4).toString('hex');
    let dataDir: string;
    let receiver: WebhookReceiver;
    let service: ServiceProcess | null = null;
    const secret = `kill-${randomBytes(8).toString('hex')}`;

    const env = () => ({
      ...mcpTestEnv(),
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_AUTH_PER_MINUTE: '100000',
      ALLOW_PRIVATE_NETWORK: 'true',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_MAX_ATTEMPTS: '4',
      ...(mode === 'distributed' ? { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `kill_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `kill-${id}` } : {}),
    });

    before(async () => {
      console.log(`      kill-under-load seed ${seed} (replay: KILL_SEED=${seed})`);
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-kill-'));
      const flaky = prng(seed ^ 0x77);
      receiver = await startWebhookReceiver(secret, () => (flaky() < 0.3 ? { status: 503 } : { status: 200 }));
    });
    after(async () => {
      if (service && service.child.exitCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
      await receiver?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it(`keeps every acknowledged effect across ${KILLS} kills at random points`, async () => {
      const rand = prng(seed);
      service = await startServiceProcess(env(), [], 60_000);
      const actors: Actor[] = [];
      for (let i = 0; i < ACTORS; i++) actors.push(await setUpActor(service.baseUrl, i, receiver.url, secret));
      const mcp = { serverId: await setUpMcp(service.baseUrl, actors[0].user), owner: actors[0].user, tally: newMcpTally() };
      const acked: Acknowledged = { flowEdits: new Map(), asyncRuns: [], documents: [], memories: [], messagesTo: new Map() };
      let inFlightFailures = 0;
      const cut: string[] = [];

      for (let round = 0; round <= KILLS; round++) {
        const baseUrl = service.baseUrl;
        if (round > 0) {
          // MCP reconnection: the server comes back connected without anyone asking.
          await waitFor('the MCP server reconnected', async () => {
            const res = await call(baseUrl, 'GET', `/mcp/servers/${mcp.serverId}`, undefined, mcp.owner.auth);
            return res.status === 200 && res.body.server.state === 'connected';
          }, 30_000);
        }
        const loadMs = round === KILLS ? 1_500 : 1_000 + Math.floor(rand() * 3_000);
        let stop = false;
        const load = Promise.all(
          actors.map(async (actor, i) => {
            const own = prng(seed + round * 100 + i);
            while (!stop) {
              try {
                await runOp(pick(own), baseUrl, actor, mcp, acked, own);
              } catch (err) {
                inFlightFailures++;
                if (cut.length < 8) cut.push(`round ${round}: ${(err as Error).message.slice(0, 160)}`);
              }
            }
          }),
        );
        await new Promise((r) => setTimeout(r, loadMs));
        if (round === KILLS) {
          stop = true;
          await load;
          break;
        }
        // Loops start nothing new from here; what is in flight is cut by the kill.
        stop = true;
        service.child.kill('SIGKILL');
        await service.exited;
        await load;
        service = await startServiceProcess(env(), [], 60_000);
      }
      console.log(`      ${acked.asyncRuns.length} async runs, ${acked.documents.length} documents, ${acked.memories.length} memories, ${[...acked.messagesTo.values()].reduce((n, m) => n + m.count, 0)} messages acknowledged; ${inFlightFailures} operations cut by the kills`);
      for (const line of cut) console.log(`        ${line}`);

      const baseUrl = service.baseUrl;
      const mcpAfter = await call(baseUrl, 'POST', `/mcp/servers/${mcp.serverId}/tools/call`, { name: 'echo', arguments: { message: 'after the kills' } }, mcp.owner.auth);
      expect(mcpAfter.status, mcpAfter.text).to.equal(200);

      const results = await verify(baseUrl, acked, 120_000);
      results.push(await verifyFlows(baseUrl, actors.map((a) => ({ flowId: a.flowId, acked: acked.flowEdits.get(a.flowId) ?? 0, attempted: a.edits, auth: a.user.auth }))));
      for (const r of results) expect(r.problems, `${r.name} (seed ${seed})`).to.deep.equal([]);
      expect(acked.asyncRuns.length + acked.documents.length, 'the load acknowledged writes').to.be.greaterThan(0);

      // Memory indexing: each memory is found by its own words (a sample, to keep the test short).
      for (const m of acked.memories.slice(0, 15)) {
        const history = await call(baseUrl, 'GET', `/db/memory/${m.id}/history`, undefined, m.auth);
        const text = history.body.items?.[0]?.text;
        if (typeof text !== 'string') throw new Error(`history of ${m.id} has no text: ${history.text.slice(0, 200)}`);
        const word = text.split(' ').at(-1)!;
        await waitFor(`memory ${m.id} found by "${word}"`, async () => {
          const res = await call(baseUrl, 'POST', '/db/memory', { operation: 'search', scope: { userId: 'soak' }, query: word, limit: 5 }, m.auth);
          return res.status === 200 && res.body.results.some((r: { id: string }) => r.id === m.id);
        }, 30_000);
      }
    });
  });
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
