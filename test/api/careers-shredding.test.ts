import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { cvObjectKey } from '../../commands/careers.js';
import { applicationStreamId } from '../../domain/careers/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { TestClock } from '../support/clock.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { bearer, makePdf, objectStoreEnv, postForm, publishVacancy, type Part } from './careers-support.js';
import { createOrg, expectError } from './orgs-support.js';

/**
 * Personal data outside the log (issue 37 item 5): a stored CV is sealed under its application's key,
 * so a copy kept anywhere (a backup, an older object version) is unreadable once the application is
 * deleted; a delete interrupted halfway is finished by repeating it, and until then the application
 * stays listed with `deleting: true`.
 */
for (const mode of availableModes()) {
  describe(`Careers CVs and deletion (${mode})`, function () {
    this.timeout(180_000);
    const clock = new TestClock();
    let svc: TestService;
    let orgId: string;
    let ownerAuth: Record<string, string>;
    let vacancyId: string;
    let ip = 10;
    const nextIp = () => `127.0.1.${ip++}`;

    const form = (cv: Buffer, over: Record<string, string> = {}): Part[] => [
      ...Object.entries({ vacancyId, orgId, name: 'Cv Owner', email: `cv-${randomBytes(4).toString('hex')}@example.test`, ...over }).map(([name, value]) => ({ name, value })),
      { name: 'cv', filename: 'Owner CV.pdf', contentType: 'application/pdf', data: cv },
    ];
    const list = () => call(svc.baseUrl, 'GET', '/careers/applications?limit=100', undefined, ownerAuth);
    const listed = (id: string) => waitUntil(`application ${id} listed`, async () => ((await list()).body.items as any[]).find((a) => a.id === id));
    const submit = async (cv: Buffer) => {
      const res = await postForm(svc.baseUrl, form(cv), nextIp());
      expect(res.status, res.text).to.equal(201);
      return res.body.applicationId as string;
    };

    before(async () => {
      svc = await startTestService(mode, { CAREERS_RATE_PER_IP_HOUR: '100', CAREERS_RATE_PER_EMAIL_DAY: '100', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...objectStoreEnv(mode) }, { clock });
      const owner = await registerUser(svc.baseUrl);
      ({ org: { id: orgId } } = await createOrg(svc, owner));
      ownerAuth = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth)).body.token);
      vacancyId = await publishVacancy(svc.baseUrl, ownerAuth);
    });
    after(async () => svc?.stop());

    it('stores the CV sealed under the application key: the object is ciphertext, downloads open it, a kept copy is unreadable after deletion', async () => {
      const marker = `Orinoco-${randomBytes(4).toString('hex')}`;
      const cv = await makePdf(['Cv Owner', `Rare skill ${marker}`]);
      const id = await submit(cv);
      const item = await listed(id);
      expect(item.deleting).to.equal(false);

      // What the object store holds (and what a backup or an older object version would keep).
      const stored = await svc.services.objects.get(cvObjectKey(orgId, id));
      expect(stored).to.not.equal(null);
      const storedCopy = Buffer.from(stored!);
      expect(storedCopy.subarray(0, 5).toString('latin1')).to.not.equal('%PDF-');
      expect(storedCopy.includes(cv.subarray(0, 64))).to.equal(false);
      expect(storedCopy.toString('latin1')).to.not.contain(marker);
      expect(Buffer.from((await svc.services.personalData.openBytes(id, storedCopy, id))!).equals(cv)).to.equal(true);
      // Bound to its application: the same bytes do not open as another application's file.
      let misbound: unknown = null;
      await svc.services.personalData.openBytes(id, storedCopy, 'another-application').catch((err) => (misbound = err));
      expect(misbound).to.be.instanceOf(Error);

      // The list's URL is this service's, with a sealed token; it gives the PDF itself.
      const url = new URL(item.cv.downloadUrl, svc.baseUrl);
      expect(url.pathname).to.equal(`/api/careers/applications/${id}/cv`);
      const download = await fetch(url);
      expect(download.status).to.equal(200);
      expect(download.headers.get('content-type')).to.equal('application/pdf');
      expect(download.headers.get('content-disposition')).to.equal('attachment; filename="Owner CV.pdf"');
      expect(Buffer.from(await download.arrayBuffer()).equals(cv)).to.equal(true);

      // A token altered, or used for another application, opens nothing.
      const token = url.searchParams.get('token')!;
      const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      expectError(await call(svc.baseUrl, 'GET', `/careers/applications/${id}/cv?token=${encodeURIComponent(tampered)}`), 403, 'URL_INVALID');
      const other = await submit(cv);
      expectError(await call(svc.baseUrl, 'GET', `/careers/applications/${other}/cv?token=${encodeURIComponent(token)}`), 403, 'URL_INVALID');
      expectError(await call(svc.baseUrl, 'GET', `/careers/applications/${id}/cv`), 400, 'VALIDATION_FAILED');

      const deleted = await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth);
      expect(deleted.status, deleted.text).to.equal(200);
      expect(await svc.services.objects.get(cvObjectKey(orgId, id))).to.equal(null);
      // The copy kept from before no longer opens: its key is gone.
      expect(await svc.services.personalData.openBytes(id, storedCopy, id)).to.equal(null);
      expectError(await call(svc.baseUrl, 'GET', `${url.pathname.replace(/^\/api/, '')}${url.search}`), 404, 'APPLICATION_NOT_FOUND');
      // The other application is untouched.
      expect((await fetch(new URL((await listed(other)).cv.downloadUrl, svc.baseUrl))).status).to.equal(200);
    });

    it('finishes a delete interrupted halfway when it is repeated, listing the application as deleting meanwhile', async () => {
      const cv = await makePdf(['Interrupted Applicant']);
      const id = await submit(cv);
      const downloadUrl = new URL((await listed(id)).cv.downloadUrl, svc.baseUrl);
      const key = cvObjectKey(orgId, id);

      // The process "crashes" after the key was dropped, while removing the file.
      const objects = svc.services.objects;
      const realDelete = objects.delete;
      objects.delete = async () => {
        throw new DomainError('OBJECT_STORE_UNAVAILABLE', 'object store unreachable (test)', 'unavailable');
      };
      let failed;
      try {
        failed = await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth);
      } finally {
        objects.delete = realDelete;
      }
      expect(failed.status, failed.text).to.equal(503);
      const stream = async () => (await svc.services.eventStore.readStream(applicationStreamId(id))).map((e) => e.type);
      expect(await stream()).to.deep.equal(['ApplicationReceived', 'ApplicationDeletionStarted']);

      // Still listed, marked deleting, nothing personal readable; no status change, no download.
      const pending = await waitUntil('listed as deleting', async () => ((await list()).body.items as any[]).find((a) => a.id === id && a.deleting));
      expect(pending).to.include({ deleting: true, name: null, email: null });
      expect(await svc.services.objects.get(key)).to.not.equal(null);
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/applications/${id}/status`, { status: 'screening' }, ownerAuth), 409, 'APPLICATION_BEING_DELETED');
      expectError(await call(svc.baseUrl, 'GET', `${downloadUrl.pathname.replace(/^\/api/, '')}${downloadUrl.search}`), 404, 'APPLICATION_NOT_FOUND');

      // The DELETE repeated finishes it.
      const retried = await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth);
      expect(retried.status, retried.text).to.equal(200);
      expect(await stream()).to.deep.equal(['ApplicationReceived', 'ApplicationDeletionStarted', 'ApplicationDeleted']);
      expect(await svc.services.objects.get(key)).to.equal(null);
      await waitUntil('gone from the list', async () => !((await list()).body.items as any[]).some((a) => a.id === id));
      // Once more: still deleted, nothing new in the log.
      expect((await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth)).status).to.equal(200);
      expect(await stream()).to.have.length(3);
    });

    // Last: it moves the service's clock past the URL's lifetime (CAREERS_CV_URL_TTL_SECONDS, 900 s).
    it('refuses a CV URL past its expiry with 403 URL_EXPIRED', async () => {
      const id = await submit(await makePdf(['Expiring']));
      const url = new URL((await listed(id)).cv.downloadUrl, svc.baseUrl);
      expect((await fetch(url)).status).to.equal(200);
      clock.advance(901_000);
      expectError(await call(svc.baseUrl, 'GET', `${url.pathname.replace(/^\/api/, '')}${url.search}`), 403, 'URL_EXPIRED');
    });
  });
}
