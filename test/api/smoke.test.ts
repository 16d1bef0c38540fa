import { expect } from 'chai';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { call } from '../support/http.js';
import { answer, apiClient } from '../support/api-client.js';

for (const mode of availableModes()) {
  describe(`API smoke (${mode})`, function () {
    this.timeout(60_000);
    let svc: TestService;
    before(async () => {
      svc = await startTestService(mode);
    });
    after(async () => svc?.stop());

    it('reports every port healthy with its adapter', async () => {
      const res = await answer(apiClient(svc.baseUrl).GET('/health'));
      expect(res.status).to.equal(200);
      expect(res.body.success).to.equal(true);
      expect(res.body.ports.eventStore).to.deep.include({ adapter: 'sqlite', ok: true });
      expect(res.body.ports.readStore).to.deep.include({ adapter: mode === 'embedded' ? 'sqlite' : 'mongodb', ok: true });
      expect(res.body.ports.bus).to.deep.include({ adapter: mode === 'embedded' ? 'embedded' : 'kafka', ok: true });
    });

    it('serves the OpenAPI 3.1 document and the docs page', async () => {
      const doc = await call(svc.baseUrl, 'GET', '/openapi.json'); // not an operation of the document itself
      expect(doc.status).to.equal(200);
      expect(doc.body.openapi).to.equal('3.1.0');
      expect(doc.body.paths['/probes'].post.requestBody.content['application/json'].schema.properties.name.type).to.equal('string');
      expect(doc.body.paths['/health'].get.operationId).to.equal('health');
      const page = await call(svc.baseUrl, 'GET', '/docs');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/text\/html/);
      expect(page.text).to.contain('/api/probes');
    });

    it('runs a command and reads its own write through the projection, then the worker reacts via the bus', async () => {
      const name = `smoke ${Date.now()} ${mode}`;
      const api = apiClient(svc.baseUrl);
      const created = await answer(api.POST('/probes', { body: { name } }));
      expect(created.status).to.equal(201);
      expect(created.headers.get('x-read-model')).to.equal('current');
      expect(created.body.probe).to.include({ name, value: 0 });
      const id: string = created.body.probe.id;

      const inc = await answer(api.POST('/probes/{probeId}/increment', { params: { path: { probeId: id } }, body: { by: 5 } }));
      expect(inc.status).to.equal(200);
      const got = await answer(api.GET('/probes/{probeId}', { params: { path: { probeId: id } } }));
      expect(got.status).to.equal(200);
      expect(got.body.probe.value).to.equal(5);

      const acknowledged = await waitUntil('the worker to acknowledge the probe', async () => {
        const res = await answer(api.GET('/probes/{probeId}', { params: { path: { probeId: id } } }));
        return res.body.probe.acknowledgedBy;
      }, 30_000);
      expect(acknowledged).to.equal('test-worker');

      const dup = await answer(api.POST('/probes', { body: { name: name.toUpperCase() } }));
      expect(dup.status).to.equal(409);
      expect(dup.body.error.code).to.equal('PROBE_NAME_TAKEN');
    });

    it('answers 404 with the error body for an unknown probe and an unknown route', async () => {
      const probe = await answer(apiClient(svc.baseUrl).GET('/probes/{probeId}', { params: { path: { probeId: 'does-not-exist' } } }));
      expect(probe.status).to.equal(404);
      expect(probe.body).to.deep.equal({ success: false, error: { code: 'PROBE_NOT_FOUND', message: 'probe not found' } });
      const route = await call(svc.baseUrl, 'GET', '/no/such/route');
      expect(route.status).to.equal(404);
      expect(route.body.error.code).to.equal('ROUTE_NOT_FOUND');
    });
  });
}
