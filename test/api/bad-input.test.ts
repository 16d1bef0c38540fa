import { expect } from 'chai';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { call } from '../support/http.js';

describe('bad input is refused before any command runs', function () {
  let svc: TestService;
  before(async () => {
    svc = await startTestService('embedded', { BODY_LIMIT_BYTES: '2048' });
  });
  after(async () => svc?.stop());

  async function expectRefused(status: number, code: string, field: string | null, send: () => ReturnType<typeof call>) {
    const head = await svc.services.eventStore.headPosition();
    const res = await send();
    expect(res.status, res.text).to.equal(status);
    expect(res.body.success).to.equal(false);
    expect(res.body.error.code).to.equal(code);
    if (field) expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).to.include(field);
    expect(await svc.services.eventStore.headPosition(), 'nothing appended').to.equal(head);
    return res;
  }

  it('malformed JSON → 400 INVALID_JSON', async () => {
    await expectRefused(400, 'INVALID_JSON', null, () => call(svc.baseUrl, 'POST', '/probes', '{"name": '));
  });

  it('a body nested deeper than 100 levels → 400 BODY_TOO_DEEP, never a 500 (the validators recurse)', async () => {
    const deep = `{"name":"x","data":${'{"a":'.repeat(150)}1${'}'.repeat(150)}}`;
    const res = await expectRefused(400, 'BODY_TOO_DEEP', null, () => call(svc.baseUrl, 'POST', '/probes', deep, { 'content-type': 'application/json' }));
    expect(res.body.error.details).to.deep.equal({ field: 'body', max: 100 });
  });

  it('a wrong type → 400 naming the field', async () => {
    await expectRefused(400, 'VALIDATION_FAILED', 'body.name', () => call(svc.baseUrl, 'POST', '/probes', { name: 42 }));
  });

  it('a missing field → 400 naming the field', async () => {
    await expectRefused(400, 'VALIDATION_FAILED', 'body.name', () => call(svc.baseUrl, 'POST', '/probes', {}));
  });

  it('an unknown field on a strict schema → 400 naming the field', async () => {
    await expectRefused(400, 'VALIDATION_FAILED', 'body.colour', () => call(svc.baseUrl, 'POST', '/probes', { name: 'x', colour: 'red' }));
  });

  it('a bad path parameter → 400 naming it', async () => {
    await expectRefused(400, 'VALIDATION_FAILED', 'params.probeId', () => call(svc.baseUrl, 'POST', '/probes/bad%20id!/increment', { by: 1 }));
  });

  it('a bad query parameter → 400 naming it', async () => {
    await expectRefused(400, 'VALIDATION_FAILED', 'query.limit', () => call(svc.baseUrl, 'GET', '/probes?limit=0'));
  });

  it('a malformed cursor → 400 INVALID_CURSOR', async () => {
    const res = await call(svc.baseUrl, 'GET', '/probes?cursor=not-a-cursor');
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('INVALID_CURSOR');
  });

  it('an oversized body → 413 PAYLOAD_TOO_LARGE', async () => {
    await expectRefused(413, 'PAYLOAD_TOO_LARGE', null, () => call(svc.baseUrl, 'POST', '/probes', { name: 'x'.repeat(5000) }));
  });

  it('a wrong method → 405 with the error body', async () => {
    const res = await call(svc.baseUrl, 'DELETE', '/probes');
    expect(res.status).to.equal(405);
    expect(res.body.error.code).to.equal('METHOD_NOT_ALLOWED');
  });

  it('a stale If-Match → 412 and nothing appended', async () => {
    const created = await call(svc.baseUrl, 'POST', '/probes', { name: `etag ${Date.now()}` });
    const id = created.body.probe.id;
    // The worker acknowledges new probes (one more event); wait for it so the version is stable.
    await waitUntil('acknowledgement', async () => (await call(svc.baseUrl, 'GET', `/probes/${id}`)).body.probe.acknowledgedBy);
    const seen = (await call(svc.baseUrl, 'GET', `/probes/${id}`)).headers.get('etag')!;
    const ok = await call(svc.baseUrl, 'POST', `/probes/${id}/increment`, { by: 1 }, { 'If-Match': seen });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('etag')).to.equal(`"${Number(seen.replace(/"/g, '')) + 1}"`);
    await expectRefused(412, 'PRECONDITION_FAILED', null, () => call(svc.baseUrl, 'POST', `/probes/${id}/increment`, { by: 1 }, { 'If-Match': seen }));
  });

  it('echoes a client request id and makes one otherwise', async () => {
    const mine = await call(svc.baseUrl, 'GET', '/health', undefined, { 'X-Request-Id': 'abc-123' });
    expect(mine.headers.get('x-request-id')).to.equal('abc-123');
    const made = await call(svc.baseUrl, 'GET', '/health');
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });
});

describe('health when a port is down', () => {
  it('answers 503 DEGRADED naming the port', async () => {
    const svc = await startTestService('embedded');
    try {
      svc.services.readStore.health = async () => ({ ok: false, detail: 'unplugged' });
      const res = await call(svc.baseUrl, 'GET', '/health');
      expect(res.status).to.equal(503);
      expect(res.body.error.code).to.equal('DEGRADED');
      expect(res.body.error.message).to.contain('readStore');
      expect(res.body.ports.readStore).to.deep.include({ ok: false, detail: 'unplugged' });
    } finally {
      await svc.stop();
    }
  });
});
