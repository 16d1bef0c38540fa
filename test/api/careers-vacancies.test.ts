import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { applicationStreamId, vacancyStreamId, type CareerEvent } from '../../domain/careers/index.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { careersProjector, listApplications } from '../../projections/careers.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { bearer, makePdf, objectStoreEnv, postForm, publishVacancy, type Part } from './careers-support.js';
import { addMember, createOrg, expectError, fields } from './orgs-support.js';

/**
 * Vacancies over real HTTP: managers publish, change, close and reopen them; members list them with
 * the closed ones; applicants list the open ones and read one without an account. An application names
 * a vacancy, goes to its organization, answers its questions (sealed with the rest of its personal
 * data), and is refused for an unknown (404) or closed (409) vacancy.
 */
for (const mode of availableModes()) {
  describe(`Careers vacancies (${mode})`, function () {
    this.timeout(180_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let ownerAuth: Record<string, string>;
    let orgId: string;
    let otherAuth: Record<string, string>;
    let cv: Buffer;
    let ip = 10;
    const nextIp = () => `127.0.3.${ip++}`;
    const questions = [
      { name: 'github', label: 'Your GitHub profile', required: true, type: 'url' },
      { name: 'notice', label: 'Notice period (weeks)', type: 'number' },
    ];

    const get = (path: string, auth?: Record<string, string>) => call(svc.baseUrl, 'GET', path, undefined, auth);
    const apply = (over: Record<string, string | undefined>, address = nextIp()) => {
      const values: Record<string, string | undefined> = { name: 'Vera Applicant', email: `vera-${randomBytes(4).toString('hex')}@example.test`, ...over };
      const parts: Part[] = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined).map(([name, value]) => ({ name, value }));
      return postForm(svc.baseUrl, [...parts, { name: 'cv', filename: 'cv.pdf', contentType: 'application/pdf', data: cv }], address);
    };
    const switchTo = async (user: RegisteredUser, org: string) => bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org }, user.auth)).body.token);

    before(async () => {
      svc = await startTestService(mode, { CAREERS_RATE_PER_IP_HOUR: '100', CAREERS_RATE_PER_EMAIL_DAY: '100', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ...objectStoreEnv(mode) });
      owner = await registerUser(svc.baseUrl);
      ({ org: { id: orgId } } = await createOrg(svc, owner));
      ownerAuth = await switchTo(owner, orgId);
      const other = await registerUser(svc.baseUrl);
      const { org } = await createOrg(svc, other);
      otherAuth = await switchTo(other, org.id);
      cv = await makePdf(['Vera Applicant', 'Compilers and queues.']);
    });
    after(async () => svc?.stop());

    it('publishes a vacancy with questions, reads it back with its version as ETag, and records one event on its own stream', async () => {
      const res = await call(svc.baseUrl, 'POST', '/careers/vacancies', { title: 'Platform engineer', description: 'Run the log.', formFields: questions }, ownerAuth);
      expect(res.status, res.text).to.equal(201);
      const vacancy = res.body.vacancy;
      expect(vacancy).to.include({ orgId, title: 'Platform engineer', description: 'Run the log.', status: 'open', version: 0 });
      expect(vacancy.formFields).to.deep.equal([questions[0], { ...questions[1], required: false }]);
      expect(res.headers.get('etag')).to.equal('"0"');
      const one = await get(`/careers/vacancies/${vacancy.id}`, ownerAuth);
      expect(one.status, one.text).to.equal(200);
      expect(one.body.vacancy).to.deep.equal(vacancy);
      expect(one.headers.get('etag')).to.equal('"0"');
      const events = await svc.services.eventStore.readStream(vacancyStreamId(vacancy.id));
      expect(events.map((e) => e.type)).to.deep.equal(['VacancyCreated']);
      expect(events[0]!.metadata).to.include({ actorId: owner.user.id, orgId });
    });

    it('refuses bad vacancies with VALIDATION_FAILED naming the field', async () => {
      const post = (body: unknown) => call(svc.baseUrl, 'POST', '/careers/vacancies', body, ownerAuth);
      const noTitle = await post({ description: 'x' });
      expectError(noTitle, 400, 'VALIDATION_FAILED');
      expect(fields(noTitle)).to.deep.equal(['body.title']);
      const dup = await post({ title: 't', formFields: [{ name: 'a', label: 'A' }, { name: 'a', label: 'B' }] });
      expectError(dup, 400, 'VALIDATION_FAILED');
      expect(fields(dup)).to.deep.equal(['body.formFields.1.name']);
      expect(fields(await post({ title: 't', formFields: [{ name: 'a', label: 'A', type: 'file' }] }))).to.deep.equal(['body.formFields.0.type']);
      expect(fields(await post({ title: 't', status: 'draft' }))).to.deep.equal(['body.status']);
      expect(fields(await post({ title: 't', salary: 1 }))).to.deep.equal(['body.salary']);
      expect(fields(await post({ title: 'x'.repeat(201) }))).to.deep.equal(['body.title']);
    });

    it('updates only what changed, with an optional If-Match (stale: 412, malformed: 400)', async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Data engineer' });
      const patch = (body: unknown, headers: Record<string, string> = {}) => call(svc.baseUrl, 'PATCH', `/careers/vacancies/${id}`, body, { ...ownerAuth, ...headers });
      const first = await patch({ description: 'Pipelines.' }, { 'If-Match': '"0"' });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.vacancy).to.include({ title: 'Data engineer', description: 'Pipelines.', version: 1 });
      expect(first.headers.get('etag')).to.equal('"1"');
      expectError(await patch({ title: 'Stale' }, { 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      expect(fields(await patch({ title: 'Bad' }, { 'If-Match': 'yesterday' }))).to.deep.equal(['headers.if-match']);
      const noHeader = await patch({ formFields: questions });
      expect(noHeader.status, noHeader.text).to.equal(200);
      expect(noHeader.body.vacancy.version).to.equal(2);
      const same = await patch({ title: 'Data engineer' });
      expect(same.body.vacancy.version, 'a PATCH that changes nothing appends nothing').to.equal(2);
      const events = await svc.services.eventStore.readStream(vacancyStreamId(id));
      expect(events.map((e) => [e.type, Object.keys(e.data as object).sort()])).to.deep.equal([
        ['VacancyCreated', ['at', 'by', 'description', 'formFields', 'orgId', 'status', 'title', 'vacancyId']],
        ['VacancyUpdated', ['at', 'by', 'description']],
        ['VacancyUpdated', ['at', 'by', 'formFields']],
      ]);
      // Read your writes: the list shows the change at once.
      const listed = ((await get('/careers/vacancies?limit=100', ownerAuth)).body.items as any[]).find((v) => v.id === id);
      expect(listed).to.include({ description: 'Pipelines.', version: 2 });
    });

    it('closes and reopens: the public list shows open vacancies only, members see both, a closed one refuses applications with 409', async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Closing soon' });
      const closed = await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/close`, undefined, ownerAuth);
      expect(closed.status, closed.text).to.equal(200);
      expect(closed.body.vacancy).to.include({ status: 'closed', version: 1 });
      expect((await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/close`, undefined, ownerAuth)).body.vacancy.version, 'closing again changes nothing').to.equal(1);
      const draft = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Not yet', status: 'closed' });
      const publicIds = ((await get(`/public/careers/vacancies?orgId=${orgId}&limit=100`)).body.items as any[]).map((v) => v.id);
      expect(publicIds).to.not.include(id);
      expect(publicIds, 'created closed: not published').to.not.include(draft);
      const closedIds = ((await get('/careers/vacancies?status=closed&limit=100', ownerAuth)).body.items as any[]).map((v) => v.id);
      expect(closedIds).to.include(id);
      expect(((await get('/careers/vacancies?status=open&limit=100', ownerAuth)).body.items as any[]).map((v) => v.id)).to.not.include(id);
      const page = await get(`/public/careers/vacancies/${id}`);
      expect(page.status, page.text).to.equal(200);
      expect(page.body.vacancy.status).to.equal('closed');
      const refused = await apply({ vacancyId: id });
      expectError(refused, 409, 'VACANCY_CLOSED');
      expectError(await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/reopen`, undefined, { ...ownerAuth, 'If-Match': '"0"' }), 412, 'PRECONDITION_FAILED');
      const reopened = await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/reopen`, undefined, { ...ownerAuth, 'If-Match': '"1"' });
      expect(reopened.body.vacancy).to.include({ status: 'open', version: 2 });
      expect(((await get(`/public/careers/vacancies?orgId=${orgId}&limit=100`)).body.items as any[]).map((v) => v.id)).to.include(id);
      const accepted = await apply({ vacancyId: id });
      expect(accepted.status, accepted.text).to.equal(201);
    });

    it('pages vacancies newest first with limit and cursor, publicly and for members', async () => {
      const { org } = await createOrg(svc, owner);
      const auth = await switchTo(owner, org.id);
      const ids = [];
      for (const title of ['one', 'two', 'three']) ids.push(await publishVacancy(svc.baseUrl, auth, { title }));
      for (const path of ['/careers/vacancies?limit=2', `/public/careers/vacancies?orgId=${org.id}&limit=2`]) {
        const first = await get(path, auth);
        expect(first.status, first.text).to.equal(200);
        expect(first.body.items.map((v: any) => v.title)).to.deep.equal(['three', 'two']);
        expect(first.body.nextCursor).to.be.a('string');
        const second = await get(`${path}&cursor=${encodeURIComponent(first.body.nextCursor)}`, auth);
        expect(second.body.items.map((v: any) => v.title)).to.deep.equal(['one']);
        expect(second.body.nextCursor).to.equal(null);
      }
      expectError(await get('/careers/vacancies?limit=101', auth), 400, 'VALIDATION_FAILED');
      expectError(await get('/careers/vacancies?cursor=garbage', auth), 400, 'INVALID_CURSOR');
    });

    it('asks the public list for an organization (none configured: 400 naming query.orgId; unknown: 404)', async () => {
      const none = await get('/public/careers/vacancies');
      expectError(none, 400, 'VALIDATION_FAILED');
      expect(fields(none)).to.deep.equal(['query.orgId']);
      expectError(await get('/public/careers/vacancies?orgId=no-such-org'), 404, 'ORG_NOT_FOUND');
      expectError(await get('/public/careers/vacancies/no-such-vacancy'), 404, 'VACANCY_NOT_FOUND');
    });

    it("keeps organizations apart (another's vacancy is 404 everywhere) and gives writes to managers only (editor: 403; viewer may read)", async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Mine' });
      expectError(await get(`/careers/vacancies/${id}`, otherAuth), 404, 'VACANCY_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/vacancies/${id}`, { title: 'Theirs' }, otherAuth), 404, 'VACANCY_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'PATCH', `/careers/vacancies/${id}`, { title: 'Theirs' }, { ...otherAuth, 'If-Match': '"7"' }), 404, 'VACANCY_NOT_FOUND');
      expectError(await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/close`, undefined, otherAuth), 404, 'VACANCY_NOT_FOUND');
      expect(((await get('/careers/vacancies?limit=100', otherAuth)).body.items as any[]).map((v) => v.id)).to.not.include(id);
      const editor = await switchTo(await addMember(svc, owner, orgId, 'editor'), orgId);
      expectError(await call(svc.baseUrl, 'POST', '/careers/vacancies', { title: 'Not mine to publish' }, editor), 403, 'FORBIDDEN');
      expectError(await call(svc.baseUrl, 'POST', `/careers/vacancies/${id}/close`, undefined, editor), 403, 'FORBIDDEN');
      const viewer = await switchTo(await addMember(svc, owner, orgId, 'viewer'), orgId);
      expect((await get(`/careers/vacancies/${id}`, viewer)).status).to.equal(200);
      expect(((await get('/careers/vacancies?limit=100', viewer)).body.items as any[]).map((v) => v.id)).to.include(id);
      expectError(await get('/careers/vacancies'), 401);
      // The personal workspace has no organization to publish for.
      expectError(await call(svc.baseUrl, 'POST', '/careers/vacancies', { title: 'Nobody\'s' }, owner.auth), 403, 'NO_ACTIVE_ORGANIZATION');
      expect((await get(`/careers/vacancies/${id}`, ownerAuth)).body.vacancy.title, 'unchanged by the refused writes').to.equal('Mine');
    });

    it('sends an application to the vacancy\'s organization; a form orgId must agree; an unknown vacancy is 404', async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Organization follows' });
      const plain = await apply({ vacancyId: id });
      expect(plain.status, plain.text).to.equal(201);
      const agreeing = await apply({ vacancyId: id, orgId });
      expect(agreeing.status, agreeing.text).to.equal(201);
      const { org: otherOrg } = await createOrg(svc, owner);
      const contradicting = await apply({ vacancyId: id, orgId: otherOrg.id });
      expectError(contradicting, 400, 'VACANCY_ORG_MISMATCH');
      expect(contradicting.body.error.details.field).to.equal('body.orgId');
      expectError(await apply({ vacancyId: 'no-such-vacancy' }), 404, 'VACANCY_NOT_FOUND');
      expectError(await apply({ vacancyId: id, orgId: 'bad org!' }), 400, 'VALIDATION_FAILED');
      const one = await get(`/careers/applications/${plain.body.applicationId}`, ownerAuth);
      expect(one.status, one.text).to.equal(200);
      expect(one.body.application).to.include({ id: plain.body.applicationId, vacancyId: id, name: 'Vera Applicant', status: 'received' });
      expect(one.body.application.answers).to.deep.equal({});
      // CAREERS_ORG_ID (the default before vacancies) must agree too.
      const config = svc.services.config as { CAREERS_ORG_ID?: string };
      const saved = config.CAREERS_ORG_ID;
      try {
        config.CAREERS_ORG_ID = otherOrg.id;
        expectError(await apply({ vacancyId: id }), 400, 'VACANCY_ORG_MISMATCH');
        expect((await apply({ vacancyId: id, orgId })).status, 'a form orgId that agrees wins over the default').to.equal(201);
        config.CAREERS_ORG_ID = orgId;
        expect((await apply({ vacancyId: id })).status).to.equal(201);
        expect((await get('/public/careers/vacancies?limit=100')).body.items.map((v: any) => v.id), 'the public list defaults to CAREERS_ORG_ID').to.include(id);
      } finally {
        config.CAREERS_ORG_ID = saved;
      }
    });

    it("takes a deleted organization's vacancies down: not found publicly, and no application reaches them", async () => {
      const { org } = await createOrg(svc, owner);
      const id = await publishVacancy(svc.baseUrl, await switchTo(owner, org.id), { title: 'Short-lived' });
      expect((await get(`/public/careers/vacancies/${id}`)).status).to.equal(200);
      const gone = await call(svc.baseUrl, 'DELETE', `/orgs/${org.id}`, undefined, owner.auth);
      expect(gone.status, gone.text).to.equal(200);
      await waitUntil('organization gone', async () => (await get(`/public/careers/vacancies/${id}`)).status === 404);
      expectError(await get(`/public/careers/vacancies/${id}`), 404, 'VACANCY_NOT_FOUND');
      expectError(await get(`/public/careers/vacancies?orgId=${org.id}`), 404, 'ORG_NOT_FOUND');
      expectError(await apply({ vacancyId: id }), 404, 'VACANCY_NOT_FOUND');
    });

    it('checks the answers to the vacancy\'s questions, naming each bad one', async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'With questions', formFields: questions });
      const missing = await apply({ vacancyId: id });
      expectError(missing, 400, 'VALIDATION_FAILED');
      expect(fields(missing)).to.deep.equal(['body.answers.github']);
      const wrong = await apply({ vacancyId: id, answers: JSON.stringify({ github: 'javascript:alert(1)', notice: 'soon', salary: '1' }) });
      expectError(wrong, 400, 'VALIDATION_FAILED');
      expect(fields(wrong)).to.deep.equal(['body.answers.salary', 'body.answers.github', 'body.answers.notice']);
      expect(fields(await apply({ vacancyId: id, answers: '{not json' }))).to.deep.equal(['body.answers']);
      expect(fields(await apply({ vacancyId: id, answers: '["https://x.test"]' }))).to.deep.equal(['body.answers']);
      expect(fields(await apply({ vacancyId: id, answers: JSON.stringify({ github: 42 }) }))).to.deep.equal(['body.answers']);
      const ok = await apply({ vacancyId: id, answers: JSON.stringify({ github: 'https://github.com/vera', notice: '4' }) });
      expect(ok.status, ok.text).to.equal(201);
      const one = await get(`/careers/applications/${ok.body.applicationId}`, ownerAuth);
      expect(one.body.application.answers).to.deep.equal({ github: 'https://github.com/vera', notice: '4' });
      // The search opens the sealed answers too.
      const found = await get(`/careers/applications?vacancyId=${id}&q=${encodeURIComponent('github.com/vera')}`, ownerAuth);
      expect(found.body.items.map((x: any) => x.id)).to.deep.equal([ok.body.applicationId]);
    });

    it('lists applications by vacancy, and reads one (another organization\'s or an unknown one: 404)', async () => {
      const a = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Filter A' });
      const b = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Filter B' });
      const toA = (await apply({ vacancyId: a })).body.applicationId;
      const toB = (await apply({ vacancyId: b })).body.applicationId;
      await waitUntil('both listed', async () => {
        const ids = ((await get('/careers/applications?limit=100', ownerAuth)).body.items as any[]).map((x) => x.id);
        return ids.includes(toA) && ids.includes(toB);
      });
      expect(((await get(`/careers/applications?vacancyId=${a}`, ownerAuth)).body.items as any[]).map((x) => x.id)).to.deep.equal([toA]);
      expect(((await get(`/careers/applications?vacancyId=${b}`, ownerAuth)).body.items as any[]).map((x) => x.id)).to.deep.equal([toB]);
      expect((await get(`/careers/applications?vacancyId=${a}`, otherAuth)).body.items).to.deep.equal([]);
      expectError(await get(`/careers/applications/${toA}`, otherAuth), 404, 'APPLICATION_NOT_FOUND');
      expectError(await get('/careers/applications/no-such-application', ownerAuth), 404, 'APPLICATION_NOT_FOUND');
      const viewer = await switchTo(await addMember(svc, owner, orgId, 'viewer'), orgId);
      expectError(await get(`/careers/applications/${toA}`, viewer), 403, 'FORBIDDEN');
    });

    it('seals the answers with the personal data: not in the log in clear, and gone for good once the application is deleted', async () => {
      const id = await publishVacancy(svc.baseUrl, ownerAuth, { title: 'Shredded answers', formFields: questions });
      const secret = `https://github.com/secret-${randomBytes(4).toString('hex')}`;
      const res = await apply({ vacancyId: id, answers: JSON.stringify({ github: secret }) });
      expect(res.status, res.text).to.equal(201);
      const applicationId = res.body.applicationId;
      expect((await get(`/careers/applications/${applicationId}`, ownerAuth)).body.application.answers).to.deep.equal({ github: secret });
      const before = await svc.services.eventStore.readStream(applicationStreamId(applicationId));
      expect(JSON.stringify(before)).to.not.contain(secret);
      const deleted = await call(svc.baseUrl, 'DELETE', `/careers/applications/${applicationId}`, undefined, ownerAuth);
      expect(deleted.status, deleted.text).to.equal(200);
      expectError(await get(`/careers/applications/${applicationId}`, ownerAuth), 404, 'APPLICATION_NOT_FOUND');
      // Replaying the received event into a fresh read model finds answers nobody can open.
      const events = (await svc.services.eventStore.readStream(applicationStreamId(applicationId))) as unknown as CareerEvent[];
      const fresh = new MemoryReadStore();
      await careersProjector.setup(fresh);
      await careersProjector.project(events[0] as never, fresh);
      const replayed = await listApplications(fresh, svc.services.personalData, { orgId }, 10, null);
      expect(replayed.items).to.have.length(1);
      expect(replayed.items[0]).to.include({ id: applicationId, answers: null, name: null });
    });
  });
}
