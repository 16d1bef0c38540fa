import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { createLogger } from '../../infra/logger/pino.js';
import { ProjectionRunner } from '../../app/projection-runner.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { probesProjector } from '../../projections/probes.js';

/**
 * The whole service is killed with SIGKILL while clients are writing. After a restart every
 * acknowledged write is there, and the read model the service serves (built incrementally, with
 * checkpoints, on MongoDB in distributed mode) equals one rebuilt from the log from scratch.
 */
for (const mode of availableModes()) {
  describe(`service killed mid-write (${mode})`, function () {
    this.timeout(120_000);
    let dataDir: string;
    let env: Record<string, string>;
    const running: ServiceProcess[] = [];
    before(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-crash-'));
      env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
      if (mode === 'distributed') {
        const id = randomBytes(4).toString('hex');
        Object.assign(env, { MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `crash_${id}`, KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `crash-${id}` });
      }
    });
    after(async () => {
      for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps every acknowledged write and converges to the rebuilt projection', async () => {
      const first = await startServiceProcess(env);
      running.push(first);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await call(first.baseUrl, 'POST', '/probes', { name: `crash ${i}` })).body.probe.id);

      const acknowledged = new Map<string, number>(ids.map((id) => [id, 0]));
      let stop = false;
      const writers = ids.map(async (id) => {
        while (!stop) {
          const res = await call(first.baseUrl, 'POST', `/probes/${id}/increment`, { by: 1 }).catch(() => null);
          if (!res) return; // the process is gone
          if (res.status === 200) acknowledged.set(id, acknowledged.get(id)! + 1);
        }
      });
      await waitUntil('some acknowledged writes', async () => [...acknowledged.values()].reduce((a, b) => a + b, 0) >= 150, 30_000);
      first.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await first.exited;

      const second = await startServiceProcess(env);
      running.push(second);
      const store = new SqliteEventStore(join(dataDir, 'events.db'));
      try {
        for (const [id, count] of acknowledged) {
          const events = await store.readStream(`probe-${id}`);
          const increments = events.filter((e) => e.type === 'ProbeIncremented').length;
          // At most one write may have been appended whose answer never reached the client.
          expect(increments).to.be.within(count, count + 1);
          expect(events.map((e) => e.revision)).to.deep.equal(events.map((_, i) => i));
        }
        const served = await waitUntil('the served projection to catch up with the log', async () => {
          const page = await call(second.baseUrl, 'GET', '/probes?limit=100');
          const items = page.body.items as Array<{ id: string; value: number; version: number }>;
          for (const id of ids) {
            const last = (await store.readStream(`probe-${id}`, { direction: 'backwards', maxCount: 1 }))[0];
            if (items.find((p) => p.id === id)?.version !== last.revision) return null;
          }
          return items;
        }, 30_000);

        const fresh = new MemoryReadStore();
        const runner = new ProjectionRunner(store, fresh, [probesProjector], createLogger('silent'));
        await runner.rebuild('probes');
        await runner.stop();
        const rebuilt = await fresh.collection('probes').find({}, { sort: { _id: 1 } });
        const servedSorted = [...served].sort((a, b) => (a.id < b.id ? -1 : 1));
        expect(servedSorted.map(({ id, ...rest }) => ({ _id: id, ...rest }))).to.deep.equal(rebuilt);
      } finally {
        await store.close();
        second.child.kill('SIGTERM');
        await second.exited;
      }
    });
  });
}
