import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { cvObjectKey } from '../../commands/careers.js';
import { applicationStreamId, type CareerEvent } from '../../domain/careers/index.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { careersProjector, listApplications } from '../../projections/careers.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { bearer, makePdf, objectStoreEnv, postForm, publishVacancy, type Part } from './careers-support.js';
import { addMember, createOrg, expectError } from './orgs-support.js';

/**
 * Careers over real HTTP: multipart applications (streamed, bounded), duplicates, rate limits,
 * honeypot, status transitions, tenant isolation, and crypto-shredding proven by replaying the log.
 */

for (const mode of availableModes()) {
  describe(`Careers (${mode})`, function () {
    this.timeout(180_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let ownerAuth: Record<string, string>;
    let orgId: string;
    let cv: Buffer;
    /** Vacancies published in `before`: backend (the form's default), frontend, and v0…v3 for the per-email limit. */
    const vacancy: Record<string, string> = {};
    const logLines: string[] = [];
    const applicantEmails: string[] = [];
    let ip = 10;
    const nextIp = () => `127.0.0.${ip++}`;

    const form = (over: Record<string, string | undefined> = {}, file: Buffer | null = cv): Part[] => {
      const fields: Record<string, string | undefined> = { vacancyId: vacancy.backend, orgId, name: 'Jane Applicant', email: `jane-${randomBytes(4).toString('hex')}@example.test`, coverLetter: 'I build queues.', ...over };
      if (fields.email) applicantEmails.push(fields.email);
      const parts: Part[] = Object.entries(fields)
        .filter((e): e is [string, string] => e[1] !== undefined)
        .map(([name, value]) => ({ name, value }));
      if (file) parts.push({ name: 'cv', filename: 'Jane CV.pdf', contentType: 'application/pdf', data: file });
      return parts;
    };
    const list = (query = '', auth = ownerAuth) => call(svc.baseUrl, 'GET', `/careers/applications${query}`, undefined, auth);
    const listed = async (applicationId: string) =>
      waitUntil(`application ${applicationId} listed`, async () => ((await list('?limit=100')).body.items as any[]).find((a) => a.id === applicationId));

    before(async () => {
      svc = await startTestService(
        mode,
        { LOG_LEVEL: 'debug', CAREERS_RATE_PER_IP_HOUR: '6', CAREERS_RATE_PER_EMAIL_DAY: '3', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...objectStoreEnv(mode) },
        { logSink: { write: (line) => void logLines.push(line) } },
      );
      owner = await registerUser(svc.baseUrl);
      ({ org: { id: orgId } } = await createOrg(svc, owner));
      const switched = await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, owner.auth);
      expect(switched.status, switched.text).to.equal(200);
      ownerAuth = bearer(switched.body.token);
      for (const name of ['backend', 'frontend', 'v0', 'v1', 'v2', 'v3']) vacancy[name] = await publishVacancy(svc.baseUrl, ownerAuth, { title: name });
      cv = await makePdf(['Jane Applicant', 'Distributed systems engineer: Kafka, event sourcing, TypeScript.']);
    });
    after(async () => svc?.stop());

    it('accepts an application without an account and lists it with a signed, expiring CV URL', async () => {
      const email = `Jane.Doe-${randomBytes(3).toString('hex')}@Example.test`;
      const res = await postForm(svc.baseUrl, form({ email }), nextIp());
      expect(res.status, res.text).to.equal(201);
      expect(res.body).to.include({ success: true, status: 'received', duplicate: false });
      const item = await listed(res.body.applicationId);
      expect(item).to.include({ vacancyId: vacancy.backend, status: 'received', name: 'Jane Applicant', email, coverLetter: 'I build queues.' });
      expect(item.cvExcerpt).to.contain('Kafka, event sourcing');
      expect(item.cv).to.include({ filename: 'Jane CV.pdf', size: cv.length, pages: 1, textStatus: 'ok' });
      expect(Date.parse(item.cv.downloadExpiresAt) - Date.now()).to.be.within(800_000, 901_000);
      const download = await fetch(new URL(item.cv.downloadUrl, svc.baseUrl));
      expect(download.status).to.equal(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(cv)).to.equal(true);
      expect(download.headers.get('content-disposition')).to.equal('attachment; filename="Jane CV.pdf"');
      // Search runs over the sealed fields, opened per request.
      expect(((await list('?q=event%20sourcing')).body.items as any[]).map((a) => a.id)).to.include(res.body.applicationId);
      expect(((await list('?q=no-such-words-anywhere')).body.items as any[]).length).to.equal(0);
      expect(((await list('?vacancyId=other-vacancy')).body.items as any[]).length).to.equal(0);
      expect(((await list('?status=received')).body.items as any[]).map((a) => a.id)).to.include(res.body.applicationId);
    });

    it('answers the first application for the same email and vacancy within 24 hours (no duplicate)', async () => {
      const email = `dup-${randomBytes(4).toString('hex')}@example.test`;
      const first = await postForm(svc.baseUrl, form({ email }), nextIp());
      expect(first.status, first.text).to.equal(201);
      const again = await postForm(svc.baseUrl, form({ email: email.toUpperCase(), name: 'Someone Else' }), nextIp());
      expect(again.status, again.text).to.equal(200);
      expect(again.body).to.include({ applicationId: first.body.applicationId, duplicate: true });
      const otherVacancy = await postForm(svc.baseUrl, form({ email, vacancyId: vacancy.frontend }), nextIp());
      expect(otherVacancy.status, otherVacancy.text).to.equal(201);
      expect(otherVacancy.body.applicationId).to.not.equal(first.body.applicationId);
      await listed(otherVacancy.body.applicationId);
      const mine = ((await list('?limit=100')).body.items as any[]).filter((a) => a.email?.toLowerCase() === email);
      expect(mine.map((a) => a.vacancyId).sort()).to.deep.equal([vacancy.backend, vacancy.frontend].sort());
    });

    it('refuses bad input with a stable code naming the field', async () => {
      const a = nextIp();
      expectError(await postForm(svc.baseUrl, form({}, null), a), 400, 'VALIDATION_FAILED');
      const badEmail = await postForm(svc.baseUrl, form({ email: 'not-an-email' }), a);
      expectError(badEmail, 400, 'VALIDATION_FAILED');
      expect(badEmail.body.error.details.fields.map((f: any) => f.field)).to.deep.equal(['body.email']);
      const notPdf = await postForm(svc.baseUrl, form({}, Buffer.from('MZ\x90\x00 not a pdf at all')), nextIp());
      expectError(notPdf, 400, 'CV_NOT_PDF');
      expect(notPdf.body.error.details.field).to.equal('body.cv');
      const corrupt = await postForm(svc.baseUrl, form({}, Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3000)])), nextIp());
      expectError(corrupt, 400, 'PDF_UNREADABLE');
      expect(corrupt.body.error.details.field).to.equal('body.cv');
      const b = nextIp();
      const unknown = await postForm(svc.baseUrl, [...form(), { name: 'salary', value: '1' }], b);
      expectError(unknown, 400, 'UNEXPECTED_FIELD');
      expect(unknown.body.error.details.field).to.equal('body.salary');
      const twoFiles = await postForm(svc.baseUrl, [...form(), { name: 'cv', filename: 'b.pdf', contentType: 'application/pdf', data: cv }], b);
      expectError(twoFiles, 400, 'DUPLICATE_FILE');
      expect(twoFiles.body.error.details.field).to.equal('body.cv');
      const c = nextIp();
      const longName = await postForm(svc.baseUrl, form({ name: 'x'.repeat(5000) }), c);
      expectError(longName, 400, 'FIELD_TOO_LARGE');
      expect(longName.body.error.details.field).to.equal('body.name');
      expectError(await call(svc.baseUrl, 'POST', '/careers/applications', 'vacancyId=v&name=n', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      const json = await call(svc.baseUrl, 'POST', '/careers/applications', { vacancyId: 'v', name: 'n', email: 'a@b.test' });
      expectError(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
      // The organization follows from the vacancy: a form naming another one contradicts it.
      const otherOrg = await postForm(svc.baseUrl, form({ orgId: 'no-such-org' }), nextIp());
      expectError(otherOrg, 400, 'VACANCY_ORG_MISMATCH');
      expect(otherOrg.body.error.details.field).to.equal('body.orgId');
      expectError(await postForm(svc.baseUrl, form({ vacancyId: 'no-such-vacancy' }), nextIp()), 404, 'VACANCY_NOT_FOUND');
    });

    it('rate-limits per address and per email; a filled honeypot is told "received" and nothing is stored', async () => {
      const address = nextIp();
      const bot = await postForm(svc.baseUrl, form({ website: 'http://spam.example' }), address);
      expect(bot.status, bot.text).to.equal(201);
      expect((await list('?limit=100')).body.items.map((a: any) => a.id)).to.not.include(bot.body.applicationId);
      for (let i = 0; i < 5; i++) expect((await postForm(svc.baseUrl, form({ website: 'x' }), address)).status).to.equal(201);
      const limited = await postForm(svc.baseUrl, form(), address);
      expectError(limited, 429, 'RATE_LIMITED');
      expect(Number(limited.headers['retry-after'])).to.be.greaterThan(0);

      const email = `often-${randomBytes(4).toString('hex')}@example.test`;
      for (let i = 0; i < 3; i++) expect((await postForm(svc.baseUrl, form({ email, vacancyId: vacancy[`v${i}`] }), nextIp())).status).to.equal(201);
      expectError(await postForm(svc.baseUrl, form({ email, vacancyId: vacancy.v3 }), nextIp()), 429, 'RATE_LIMITED');
    });

    it('moves an application only along the allowed transitions, each change recorded with who and why', async () => {
      const res = await postForm(svc.baseUrl, form(), nextIp());
      const id = res.body.applicationId;
      await listed(id);
      const patch = (status: string, note?: string) => call(svc.baseUrl, 'PATCH', `/careers/applications/${id}/status`, { status, ...(note ? { note } : {}) }, ownerAuth);
      const skip = await patch('offer');
      expectError(skip, 409, 'INVALID_STATUS_TRANSITION');
      expect(skip.body.error.details).to.deep.include({ from: 'received', to: 'offer', allowed: ['screening', 'rejected', 'withdrawn'] });
      for (const [status, note] of [['screening', 'strong CV'], ['interview', 'passed screening'], ['offer', 'great interview'], ['hired', 'signed']]) {
        const moved = await patch(status, note);
        expect(moved.status, moved.text).to.equal(200);
        expect(moved.body.application.status).to.equal(status);
      }
      const final = await patch('rejected');
      expectError(final, 409, 'INVALID_STATUS_TRANSITION');
      const item = await listed(id);
      expect(item.history.map((h: any) => [h.from, h.to, h.note, h.by])).to.deep.equal([
        ['received', 'screening', 'strong CV', owner.user.id],
        ['screening', 'interview', 'passed screening', owner.user.id],
        ['interview', 'offer', 'great interview', owner.user.id],
        ['offer', 'hired', 'signed', owner.user.id],
      ]);
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/applications/${id}/status`, { status: 'nonsense' }, ownerAuth), 400, 'VALIDATION_FAILED');
    });

    it("keeps organizations apart: another organization's manager sees nothing and gets 404; a viewer gets 403", async () => {
      const res = await postForm(svc.baseUrl, form(), nextIp());
      const id = res.body.applicationId;
      await listed(id);
      const other = await registerUser(svc.baseUrl);
      const { org } = await createOrg(svc, other);
      const otherAuth = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, other.auth)).body.token);
      expect((await list('?limit=100', otherAuth)).body.items).to.deep.equal([]);
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/applications/${id}/status`, { status: 'screening' }, otherAuth), 404, 'APPLICATION_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, otherAuth), 404, 'APPLICATION_NOT_FOUND');
      const viewer = await addMember(svc, owner, orgId, 'viewer');
      const viewerAuth = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, viewer.auth)).body.token);
      expectError(await list('', viewerAuth), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'GET', '/careers/applications'), 401);
      // The owner's own listing still has it, unchanged.
      expect((await listed(id)).status).to.equal('received');
    });

    it('crypto-shreds a deleted application: a replay of its stream cannot bring name, email or CV text back', async () => {
      const email = `shred-${randomBytes(4).toString('hex')}@example.test`;
      const secretWords = `Zanzibar-${randomBytes(4).toString('hex')}`;
      const pdf = await makePdf(['Shred Me Applicant', `Secret skill ${secretWords}`]);
      const res = await postForm(svc.baseUrl, form({ email, name: 'Shred Me Applicant' }, pdf), nextIp());
      expect(res.status, res.text).to.equal(201);
      const id = res.body.applicationId;
      const before = await listed(id);
      expect(before.cvExcerpt).to.contain(secretWords);
      const cvUrl = new URL(before.cv.downloadUrl, svc.baseUrl);

      const deleted = await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth);
      expect(deleted.status, deleted.text).to.equal(200);
      expect((await call(svc.baseUrl, 'DELETE', `/careers/applications/${id}`, undefined, ownerAuth)).status).to.equal(200);
      await waitUntil('deleted application gone from the list', async () => !((await list('?limit=100')).body.items as any[]).some((a) => a.id === id));
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/applications/${id}/status`, { status: 'screening' }, ownerAuth), 404, 'APPLICATION_NOT_FOUND');
      expect((await fetch(cvUrl)).status).to.equal(404);
      expect(await svc.services.objects.get(cvObjectKey(orgId, id))).to.equal(null);

      // The log still holds the events, but nothing personal in clear, and the sealed part no longer opens.
      const events = (await svc.services.eventStore.readStream(applicationStreamId(id))) as unknown as Array<CareerEvent & { metadata: unknown }>;
      expect(events.map((e) => e.type)).to.deep.equal(['ApplicationReceived', 'ApplicationDeletionStarted', 'ApplicationDeleted']);
      const raw = JSON.stringify(events);
      for (const personal of [email, 'Shred Me Applicant', secretWords, 'I build queues']) expect(raw).to.not.contain(personal);
      const receivedEvent = events[0] as Extract<CareerEvent, { type: 'ApplicationReceived' }>;
      expect(await svc.services.personalData.open(id, receivedEvent.data.personal)).to.equal(null);

      // Replay: the projector over the stream's events, up to and without the deletion, into a fresh read model.
      const fresh = new MemoryReadStore();
      await careersProjector.setup(fresh);
      await careersProjector.project(events[0] as never, fresh);
      const replayed = await listApplications(fresh, svc.services.personalData, { orgId }, 10, null);
      expect(replayed.items).to.have.length(1);
      expect(replayed.items[0]).to.include({ id, name: null, email: null, coverLetter: null, cvText: null, cvFilename: null });
      await careersProjector.project(events[1] as never, fresh);
      await careersProjector.project(events[2] as never, fresh);
      expect((await listApplications(fresh, svc.services.personalData, { orgId }, 10, null)).items).to.deep.equal([]);

      // The same person may apply again (the duplicate check was freed).
      const again = await postForm(svc.baseUrl, form({ email }), nextIp());
      expect(again.status, again.text).to.equal(201);
      expect(again.body.applicationId).to.not.equal(id);
    });

    it('never writes an applicant email or CV text to the logs', () => {
      const logs = logLines.join('\n');
      expect(logs.length).to.be.greaterThan(0);
      expect(applicantEmails.length).to.be.greaterThan(10);
      for (const email of applicantEmails) expect(logs.toLowerCase()).to.not.contain(email.toLowerCase());
      expect(logs).to.not.contain('Kafka, event sourcing');
      expect(logs).to.not.contain('Zanzibar-');
    });
  });
}

describe('Careers upload limits (embedded)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let orgId: string;
  before(async () => {
    svc = await startTestService('embedded', { RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const owner = await registerUser(svc.baseUrl);
    ({ org: { id: orgId } } = await createOrg(svc, owner));
  });
  after(async () => svc?.stop());

  it('refuses a 60 MiB CV with 413 FILE_TOO_LARGE while it streams, without buffering it', async () => {
    const total = 60 * 1024 * 1024;
    const boundary = `----big${randomBytes(6).toString('hex')}`;
    const head = Buffer.from(
      [
        ['vacancyId', 'big-vacancy'],
        ['orgId', orgId],
        ['name', 'Big File'],
        ['email', 'big@example.test'],
      ]
        .map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`)
        .join('') + `--${boundary}\r\nContent-Disposition: form-data; name="cv"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
    );
    const chunk = Buffer.alloc(256 * 1024, 0x41);
    const url = new URL(`${svc.baseUrl}/careers/applications`);
    const mem = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const baseline = mem();
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, mem())), 5);
    let sent = 0;
    let sentWhenAnswered = -1;
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      // Chunked, no Content-Length: the server cannot refuse up front and must count while streaming.
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }, (response) => {
        sentWhenAnswered = sent;
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          req.destroy();
          resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) });
        });
      });
      req.on('error', (err) => (sentWhenAnswered >= 0 ? undefined : reject(err)));
      req.write(head);
      const pump = () => {
        while (sent < total && sentWhenAnswered < 0) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (sentWhenAnswered < 0) req.end(`\r\n--${boundary}--\r\n`);
      };
      pump();
    });
    clearInterval(sampler);
    const grew = peak - baseline;
    console.log(`      60 MiB upload: answered ${res.status} after ${(sentWhenAnswered / 1048576).toFixed(1)} MiB sent; heap+buffers grew at most ${(grew / 1048576).toFixed(1)} MiB`);
    expect(res.status).to.equal(413);
    expect(res.body.error).to.deep.include({ code: 'FILE_TOO_LARGE', details: { field: 'body.cv', maxBytes: 10 * 1024 * 1024 } });
    expect(sentWhenAnswered, 'answered before the whole upload was sent').to.be.lessThan(total);
    expect(grew, 'memory growth far below the 60 MiB sent').to.be.lessThan(40 * 1024 * 1024);
  });

  it('refuses a declared Content-Length beyond every limit before reading the body', async () => {
    const url = new URL(`${svc.baseUrl}/careers/applications`);
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(60 * 1024 * 1024) } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => {
          req.destroy();
          resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) });
        });
      });
      req.on('error', reject);
      req.write('--x\r\n');
    });
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('FILE_TOO_LARGE');
  });
});
