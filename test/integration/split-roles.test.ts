import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, waitUntil } from '../support/test-service.js';

/**
 * The three roles as separate processes sharing the distributed adapters: the API answers a write
 * only once the projector process has projected it (read-your-writes across processes), and the
 * worker process reacts to it through Kafka.
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP split roles: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

(distributed ? describe : describe.skip)('split roles (api, projector, worker)', function () {
  this.timeout(120_000);
  const processes: ServiceProcess[] = [];
  let dataDir: string;
  after(async () => {
    for (const p of processes) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves read-your-writes from another process and reacts through Kafka', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-roles-'));
    const id = randomBytes(4).toString('hex');
    const env = {
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn',
      MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `roles_${id}`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `roles-${id}`,
      ADMIN_EMAILS: `operator-${id}@example.test`, JWT_SECRET: `split-roles-secret-${id}-0123456789abcdef`,
    };
    const [api, projector, worker] = await Promise.all(
      (['api', 'projector', 'worker'] as const).map((role) => startServiceProcess(env, ['--role', role])),
    );
    processes.push(api, projector, worker);
    for (const [p, role] of [[api, 'api'], [projector, 'projector'], [worker, 'worker']] as const) {
      expect((await call(p.baseUrl, 'GET', '/health')).body.role).to.equal(role);
    }
    expect((await call(projector.baseUrl, 'GET', '/probes')).status, 'only the api role serves the API').to.equal(404);

    const created = await call(api.baseUrl, 'POST', '/probes', { name: `roles ${id}` });
    expect(created.status).to.equal(201);
    expect(created.headers.get('x-read-model')).to.equal('current');
    expect(created.body.probe.name).to.equal(`roles ${id}`);
    const probeId = created.body.probe.id;
    const inc = await call(api.baseUrl, 'POST', `/probes/${probeId}/increment`, { by: 7 });
    expect(inc.body.probe.value).to.equal(7);

    const by = await waitUntil('the worker process to acknowledge through Kafka', async () => {
      const res = await call(api.baseUrl, 'GET', `/probes/${probeId}`);
      return res.body.probe.acknowledgedBy as string | null;
    }, 60_000);
    expect(by).to.match(/^worker:\d+$/);

    // The API process asks, the projector process rebuilds and records the outcome.
    const operator = await registerUser(api.baseUrl, { email: `operator-${id}@example.test` });
    const rebuilt = await call(api.baseUrl, 'POST', '/admin/projections/probes/rebuild', undefined, operator.auth);
    expect(rebuilt.status, rebuilt.text).to.equal(200);
    expect(rebuilt.body.events).to.be.at.least(3);
    const after = await call(api.baseUrl, 'GET', `/probes/${probeId}`);
    expect(after.body.probe).to.include({ value: 7, acknowledgedBy: by });
  });
});
