import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
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
  let group: DistributedProcessGroup | null = null;
  after(async () => {
    await group?.stop();
  });

  it('serves read-your-writes from another process and reacts through Kafka', async () => {
    group = new DistributedProcessGroup('roles');
    const id = group.id;
    const env = group.env({ ADMIN_EMAILS: `operator-${group.id}@example.test` });
    const [api, projector, worker] = await group.start(env, ['api', 'projector', 'worker']);
    for (const [p, role] of [[api, 'api'], [projector, 'projector'], [worker, 'worker']] as const) {
      expect((await call(p.baseUrl, 'GET', '/health')).body.role).to.equal(role);
    }
    // Plain fetch: a projector serves no operation of the API document, so its answer is not validated against it.
    expect((await fetch(`${projector.baseUrl}/probes`)).status, 'only the api role serves the API').to.equal(404);

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
