import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { runServiceExpectingExit, startServiceProcess } from '../support/service-process.js';
import { waitUntil } from '../support/test-service.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

describe('the service process', function () {
  this.timeout(90_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-proc-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('starts with no configuration, stops on SIGTERM, and loses nothing across the restart', async () => {
    const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
    const first = await startServiceProcess(env);
    const health = await call(first.baseUrl, 'GET', '/health');
    expect(health.status).to.equal(200);
    expect(health.body.role).to.equal('all');
    const created = await call(first.baseUrl, 'POST', '/probes', { name: 'survivor' });
    const id = created.body.probe.id;
    await call(first.baseUrl, 'POST', `/probes/${id}/increment`, { by: 3 });
    await waitUntil('acknowledgement', async () => (await call(first.baseUrl, 'GET', `/probes/${id}`)).body.probe.acknowledgedBy);

    first.child.kill('SIGTERM');
    const exit = await first.exited;
    expect(exit.code, first.stderr()).to.equal(0);

    const second = await startServiceProcess(env);
    try {
      const got = await call(second.baseUrl, 'GET', `/probes/${id}`);
      expect(got.body.probe).to.include({ name: 'survivor', value: 3 });
      expect(got.body.probe.acknowledgedBy).to.be.a('string');
      // The consumer's checkpoint survived: the restart did not make it act again. It handles the log
      // in order, so its acknowledging a probe created now proves it is past the first one's events.
      const later = (await call(second.baseUrl, 'POST', '/probes', { name: 'after the restart' })).body.probe.id;
      await waitUntil('the later probe acknowledged', async () => (await call(second.baseUrl, 'GET', `/probes/${later}`)).body.probe.acknowledgedBy);
      const store = new SqliteEventStore(join(dataDir, 'events.db'));
      const acks = (await store.readStream(`probe-${id}`)).filter((e) => e.type === 'ProbeAcknowledged');
      await store.close();
      expect(acks).to.have.length(1);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });

  it('refuses to start on a bad configuration value and names it', async () => {
    const bad = await runServiceExpectingExit({ DATA_DIR: dataDir, PORT: 'eighty' });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('PORT');
    const url = await runServiceExpectingExit({ DATA_DIR: dataDir, MONGODB_URL: 'http://nope' });
    expect(url.code).to.equal(2);
    expect(url.stderr).to.contain('MONGODB_URL');
    const role = await runServiceExpectingExit({ DATA_DIR: dataDir }, ['--role', 'chef']);
    expect(role.code).to.equal(2);
    expect(role.stderr).to.contain('--role');
  });

  it('runs one role at a time: a worker serves only health', async () => {
    const worker = await startServiceProcess({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' }, ['--role', 'worker']);
    try {
      const health = await call(worker.baseUrl, 'GET', '/health');
      expect(health.status).to.equal(200);
      expect(health.body.role).to.equal('worker');
      // Plain fetch: a worker serves no operation of the API document, so its answer is not validated against it.
      const probes = await fetch(`${worker.baseUrl}/probes`);
      expect(probes.status).to.equal(404);
    } finally {
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).to.equal(0);
    }
  });
});
