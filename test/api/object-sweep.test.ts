import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { sweepOrphanObjects, startObjectSweep } from '../../app/object-sweep.js';
import { cvObjectKey } from '../../commands/careers.js';
import { DomainError } from '../../domain/shared/decider.js';
import { TestClock } from '../support/clock.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { bearer, makePdf, objectStoreEnv, postForm, publishVacancy } from './careers-support.js';
import { createOrg } from './orgs-support.js';

/**
 * The orphan sweep (app/object-sweep.ts): files of app instances and careers CVs that no event names
 * (a crash between the upload and its event, a delete stopped halfway) are removed once older than
 * the grace period; files the log names, and recent ones, stay.
 */
for (const mode of availableModes()) {
  describe(`object sweep (${mode})`, function () {
    this.timeout(180_000);
    const HOUR = 3600_000;
    const clock = new TestClock();
    let svc: TestService;
    let owner: RegisteredUser;
    let orgId: string;
    let ownerAuth: Record<string, string>;
    let vacancyId: string;
    // The sweep's own clock is moved, not the service's (its sign-in tokens would expire).
    const sweep = (aheadMs = 0) =>
      sweepOrphanObjects({ eventStore: svc.services.eventStore, objects: svc.services.objects, logger: svc.services.logger, now: () => new Date(clock.now().getTime() + aheadMs), graceMs: HOUR });
    const exists = async (key: string) => (await svc.services.objects.get(key)) !== null;
    const put = (key: string) => svc.services.objects.put(key, Buffer.from('orphan bytes'), { contentType: 'application/octet-stream' });

    before(async () => {
      svc = await startTestService(mode, { CAREERS_RATE_PER_IP_HOUR: '100', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...objectStoreEnv(mode) }, { clock });
      owner = await registerUser(svc.baseUrl);
      ({ org: { id: orgId } } = await createOrg(svc, owner));
      ownerAuth = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth)).body.token);
      vacancyId = await publishVacancy(svc.baseUrl, ownerAuth);
    });
    after(async () => svc?.stop());

    it('removes app-instance uploads and CVs no event names once past the grace period, and keeps the rest', async () => {
      // Named by the log: an application's CV, an app instance's file.
      const submitted = await postForm(svc.baseUrl, [
        ...Object.entries({ vacancyId, orgId, name: 'Kept Applicant', email: `kept-${randomBytes(4).toString('hex')}@example.test` }).map(([name, value]) => ({ name, value })),
        { name: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', data: await makePdf(['Kept']) },
      ], '127.0.2.1');
      expect(submitted.status, submitted.text).to.equal(201);
      const keptCv = cvObjectKey(orgId, submitted.body.applicationId);
      const instance = await call(svc.baseUrl, 'POST', '/app-instances', { type: 'job_tracker', name: 'Files' }, owner.auth);
      expect(instance.status, instance.text).to.equal(201);
      const upload = await call(svc.baseUrl, 'POST', `/app-instances/${instance.body.instance.id}/files`, { path: 'kept.txt', content: Buffer.from('kept').toString('base64') }, owner.auth);
      expect(upload.status, upload.text).to.equal(201);
      const instanceFiles: string[] = [];
      for await (const o of svc.services.objects.list(`app-instances/${instance.body.instance.id}/`)) instanceFiles.push(o.key);
      expect(instanceFiles).to.have.length(1);
      const keptFile = instanceFiles[0]!;

      // Orphans: uploads whose event never came (a crash between the two), one of them of an instance that exists.
      const orphanCv = cvObjectKey(orgId, `crashed-${randomBytes(4).toString('hex')}`);
      const orphanUpload = `app-instances/no-such-instance-${randomBytes(4).toString('hex')}/${randomBytes(8).toString('hex')}`;
      const orphanOfInstance = `app-instances/${instance.body.instance.id}/${randomBytes(8).toString('hex')}`;
      const unknownShape = `careers/${orgId}/odd-${randomBytes(4).toString('hex')}/notes.txt`;
      for (const key of [orphanCv, orphanUpload, orphanOfInstance, unknownShape]) await put(key);

      // Within the grace period nothing is taken (an upload whose event is on its way).
      expect(await sweep()).to.deep.equal([]);

      const removed = await sweep(2 * HOUR);
      expect(removed.sort()).to.deep.equal([orphanCv, orphanOfInstance, orphanUpload].sort());
      for (const key of [orphanCv, orphanUpload, orphanOfInstance]) expect(await exists(key), key).to.equal(false);
      for (const key of [keptCv, keptFile, unknownShape]) expect(await exists(key), key).to.equal(true);
      await svc.services.objects.delete(unknownShape);
    });

    it("removes the CV left by a delete stopped halfway (the application's deletion began)", async () => {
      const submitted = await postForm(svc.baseUrl, [
        ...Object.entries({ vacancyId, orgId, name: 'Half Deleted', email: `half-${randomBytes(4).toString('hex')}@example.test` }).map(([name, value]) => ({ name, value })),
        { name: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', data: await makePdf(['Half']) },
      ], '127.0.2.2');
      const id = submitted.body.applicationId;
      const key = cvObjectKey(orgId, id);
      const objects = svc.services.objects;
      const realDelete = objects.delete;
      objects.delete = async () => {
        throw new DomainError('OBJECT_STORE_UNAVAILABLE', 'object store unreachable (test)', 'unavailable');
      };
      try {
        expect((await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth)).status).to.equal(503);
      } finally {
        objects.delete = realDelete;
      }
      expect(await exists(key)).to.equal(true);
      expect(await sweep(2 * HOUR)).to.deep.equal([key]);
      expect(await exists(key)).to.equal(false);
      // The repeated DELETE still finishes (the file being gone already is fine).
      expect((await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth)).status).to.equal(200);
      await waitUntil('gone from the list', async () => !((await call(svc.baseUrl, 'GET', '/careers/applications?limit=100', undefined, ownerAuth)).body.items as any[]).some((a) => a.id === id));
    });

    it('runs at start, then on its interval; an interval of 0 turns it off', async () => {
      const orphan = `app-instances/gone-${randomBytes(4).toString('hex')}/${randomBytes(8).toString('hex')}`;
      await put(orphan);
      const ports = { eventStore: svc.services.eventStore, objects: svc.services.objects, logger: svc.services.logger, now: () => new Date(clock.now().getTime() + 2 * HOUR), graceMs: HOUR };
      const off = startObjectSweep(ports, 0);
      await off.stop();
      expect(await exists(orphan)).to.equal(true);
      const on = startObjectSweep(ports, HOUR);
      await on.stop(); // waits for the pass begun at start
      expect(await exists(orphan)).to.equal(false);
    });
  });
}
