import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, viewOnlyKey, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { addMember, bearer, createOrg, expectError } from './orgs-support.js';

for (const mode of availableModes()) {
  describe(`Document database API (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let other: RegisteredUser;
    let viewOnly: Record<string, string>;
    before(async () => {
      svc = await startTestService(mode, { RATE_LIMIT_AUTH_PER_MINUTE: '1000', DOCUMENTS_MAX_DOCUMENT_BYTES: '2048' });
      owner = await registerUser(svc.baseUrl);
      other = await registerUser(svc.baseUrl);
      viewOnly = await viewOnlyKey(svc.baseUrl, owner);
    });
    after(async () => svc?.stop());

    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = owner.auth) => call(svc.baseUrl, method, path, body, headers);
    async function created(name: string, extra: Record<string, unknown> = {}) {
      const res = await api('POST', '/db/collections', { name, ...extra });
      expect(res.status, res.text).to.equal(201);
      return res.body.collection;
    }
    async function insert(coll: string, document: Record<string, unknown>, id?: string) {
      const res = await api('POST', `/db/collections/${coll}/documents`, id === undefined ? { document } : { id, document });
      expect(res.status, res.text).to.equal(201);
      return res.body.document;
    }
    const search = (coll: string, body: Record<string, unknown>, headers?: Record<string, string>) => api('POST', `/db/collections/${coll}/search`, body, headers);

    it('creates, lists and gets collections; names are unique per owner and validated', async () => {
      const c = await created('people');
      expect(c).to.include({ name: 'people', documentCount: 0, sizeBytes: 0 });
      expectError(await api('POST', '/db/collections', { name: 'People' }), 409, 'COLLECTION_NAME_TAKEN');
      for (const bad of ['system_x', '_hidden', 'a.b', 'x'.repeat(65), 'sp ace', '$x']) {
        const res = await api('POST', '/db/collections', { name: bad });
        expectError(res, 400, 'VALIDATION_FAILED');
        expect(res.body.error.details.fields[0].field).to.equal('body.name');
      }
      // Another user may use the same name.
      const mine = await call(svc.baseUrl, 'POST', '/db/collections', { name: 'people' }, other.auth);
      expect(mine.status, mine.text).to.equal(201);
      await insert('people', { name: 'Ada' }, 'ada');
      const list = await api('GET', '/db/collections?limit=1');
      expect(list.status, list.text).to.equal(200);
      expect(list.body.items).to.have.length(1);
      const one = await api('GET', '/db/collections/people');
      expect(one.body.collection.documentCount).to.equal(1);
      expect(one.body.collection.sizeBytes).to.equal(JSON.stringify({ name: 'Ada' }).length);
      const all = await api('GET', '/db/collections?limit=100');
      const listed = all.body.items.find((i: { name: string }) => i.name === 'people');
      expect(listed).to.include({ name: 'people', documentCount: 1, sizeBytes: JSON.stringify({ name: 'Ada' }).length });
      expect(Date.parse(listed.createdAt)).to.be.a('number').and.not.NaN;
      expect(Date.parse(listed.updatedAt)).to.be.at.least(Date.parse(listed.createdAt));
    });

    it('inserts documents with given or generated ids; a duplicate id is 409', async () => {
      await created('dups');
      const given = await insert('dups', { a: 1 }, 'x1');
      expect(given).to.deep.equal({ _id: 'x1', a: 1 });
      const viaId = await insert('dups', { _id: 'x2', a: 2 });
      expect(viaId._id).to.equal('x2');
      const generated = await insert('dups', { a: 3 });
      expect(generated._id).to.be.a('string').with.length.above(8);
      expectError(await api('POST', '/db/collections/dups/documents', { id: 'x1', document: { a: 9 } }), 409, 'DOCUMENT_EXISTS');
      const got = await api('GET', '/db/collections/dups/documents/x1');
      expect(got.body.document).to.deep.equal({ _id: 'x1', a: 1 });
    });

    it('refuses documents FerretDB cannot store, and ones over the size limit, naming the path', async () => {
      await created('shapes');
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ a: { $b: 1 } }, 'document.a.$b'],
        [{ 'a.b': 1 }, 'document.a.b'],
        [{ m: [[1, 2]] }, 'document.m.0'],
      ];
      for (const [document, path] of cases) {
        const res = await api('POST', '/db/collections/shapes/documents', { document });
        expectError(res, 400, 'INVALID_DOCUMENT');
        expect(res.body.error.details.path).to.equal(path);
      }
      expectError(await api('POST', '/db/collections/shapes/documents', { document: { big: 'x'.repeat(3000) } }), 400, 'DOCUMENT_TOO_LARGE');
    });

    it('updates by replacement and by operators, keeping the full history', async () => {
      await created('ops');
      await insert('ops', { n: 1, tags: ['a'], keep: true, drop: 1 }, 'd1');
      const r1 = await api('PUT', '/db/collections/ops/documents/d1', {
        update: { $inc: { n: 2 }, $push: { tags: 'b' }, $unset: { drop: '' }, $set: { 'nested.x': 'y' } },
      });
      expect(r1.status, r1.text).to.equal(200);
      expect(r1.body.document).to.deep.equal({ _id: 'd1', n: 3, tags: ['a', 'b'], keep: true, nested: { x: 'y' } });
      const r2 = await api('PUT', '/db/collections/ops/documents/d1', { update: { $pull: { tags: 'a' }, $addToSet: { more: 'b' } } });
      expect(r2.body.document.tags).to.deep.equal(['b']);
      expect(r2.body.document.more).to.deep.equal(['b']);
      const r3 = await api('PUT', '/db/collections/ops/documents/d1', { document: { replaced: true } });
      expect(r3.body.document).to.deep.equal({ _id: 'd1', replaced: true });
      const got = await api('GET', '/db/collections/ops/documents/d1');
      expect(got.body.document).to.deep.equal({ _id: 'd1', replaced: true });
      expect(got.headers.get('etag')).to.equal(`"${r3.body.revision}"`);
      expectError(await api('PUT', '/db/collections/ops/documents/d1', { update: { $set: { x: 1 } } }, { ...owner.auth, 'If-Match': `"${r2.body.revision}"` }), 412, 'PRECONDITION_FAILED');
      const matched = await api('PUT', '/db/collections/ops/documents/d1', { update: { $set: { x: 1 } } }, { ...owner.auth, 'If-Match': `"${r3.body.revision}"` });
      expect(matched.status, matched.text).to.equal(200);
      expectError(await api('PUT', '/db/collections/ops/documents/d1', { update: { $rename: { a: 'b' } } }), 400, 'INVALID_UPDATE');
      expectError(await api('PUT', '/db/collections/ops/documents/d1', { update: { $set: { _id: 'other' } } }), 400, 'INVALID_UPDATE');
      expectError(await api('PUT', '/db/collections/ops/documents/nope', { update: { $set: { a: 1 } } }), 404, 'DOCUMENT_NOT_FOUND');
      expect((await api('DELETE', '/db/collections/ops/documents/d1')).status).to.equal(200);
      expectError(await api('GET', '/db/collections/ops/documents/d1'), 404, 'DOCUMENT_NOT_FOUND');
      const history = await api('GET', '/db/collections/ops/documents/d1/history?limit=2');
      expect(history.status, history.text).to.equal(200);
      expect(history.body.items.map((h: { type: string }) => h.type)).to.deep.equal(['deleted', 'updated']);
      expect(history.body.items[1].document).to.deep.equal({ _id: 'd1', replaced: true, x: 1 });
      expect(history.body.items[0].actorId).to.equal(owner.user.id);
      const rest = await api('GET', `/db/collections/ops/documents/d1/history?limit=10&cursor=${history.body.nextCursor}`);
      expect(rest.body.items.map((h: { type: string }) => h.type)).to.deep.equal(['updated', 'updated', 'updated', 'inserted']);
      expect(rest.body.items[0].document).to.deep.equal({ _id: 'd1', replaced: true });
      expect(rest.body.items[1].update).to.deep.equal({ $pull: { tags: 'a' }, $addToSet: { more: 'b' } });
      expect(rest.body.nextCursor).to.equal(null);
    });

    it('enforces the collection schema on every write, naming the failing path', async () => {
      const schema = {
        type: 'object',
        required: ['email'],
        properties: { email: { type: 'string', pattern: '^[^@]+@[^@]+$' }, age: { type: 'integer', minimum: 0 }, address: { type: 'object', properties: { zip: { type: 'string' } } } },
      };
      const c = await created('users', { schema });
      expect(c.schema).to.deep.equal(schema);
      await insert('users', { email: 'a@b.c', age: 3 }, 'u1');
      const bad = await api('POST', '/db/collections/users/documents', { document: { email: 'a@b.c', address: { zip: 12 } } });
      expectError(bad, 400, 'SCHEMA_VIOLATION');
      expect(bad.body.error.details.path).to.equal('document.address.zip');
      const missing = await api('POST', '/db/collections/users/documents', { document: { age: 1 } });
      expectError(missing, 400, 'SCHEMA_VIOLATION');
      expect(missing.body.error.details.path).to.equal('document.email');
      const viaUpdate = await api('PUT', '/db/collections/users/documents/u1', { update: { $inc: { age: -10 } } });
      expectError(viaUpdate, 400, 'SCHEMA_VIOLATION');
      expect(viaUpdate.body.error.details.path).to.equal('document.age');
      expectError(await api('PUT', '/db/collections/users/documents/u1', { document: { age: 1 } }), 400, 'SCHEMA_VIOLATION');
      expectError(await api('POST', '/db/collections', { name: 'badschema', schema: { type: 'bogus' } }), 400, 'INVALID_SCHEMA');
      // Schema patterns run on every write in this process: catastrophic ones are refused up front.
      const evil = await api('POST', '/db/collections', { name: 'badschema', schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } } });
      expectError(evil, 400, 'INVALID_SCHEMA');
      expect(evil.body.error.details.path).to.equal('body.schema.properties.a.pattern');
      expectError(await api('POST', '/db/collections', { name: 'badschema', schema: { type: 'object', patternProperties: { '^((x*)y)*$': { type: 'string' } } } }), 400, 'INVALID_SCHEMA');
    });

    it('searches with filter, sort, projection and cursor, on an indexed collection', async () => {
      await created('items', { indexes: ['status', { keys: { 'meta.rank': -1 } }] });
      for (let i = 0; i < 25; i++) await insert('items', { n: i, status: i % 3 === 0 ? 'open' : 'closed', meta: { rank: i % 5 }, tags: i % 2 ? ['odd'] : ['even'] }, `i${String(i).padStart(2, '0')}`);
      const open = await search('items', { filter: { status: 'open', n: { $gte: 6 } }, sort: { n: -1 }, projection: { n: 1 } });
      expect(open.status, open.text).to.equal(200);
      expect(open.body.items).to.deep.equal([24, 21, 18, 15, 12, 9, 6].map((n) => ({ _id: `i${String(n).padStart(2, '0')}`, n })));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await search('items', { filter: { $or: [{ tags: 'odd' }, { 'meta.rank': 0 }] }, sort: { 'meta.rank': 1 }, limit: 4, ...(cursor ? { cursor } : {}) });
        expect(page.status, page.text).to.equal(200);
        seen.push(...page.body.items.map((d: { _id: string }) => d._id));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      const expected = Array.from({ length: 25 }, (_, n) => n).filter((n) => n % 2 === 1 || n % 5 === 0);
      expect(seen).to.have.length(expected.length);
      expect(new Set(seen).size).to.equal(expected.length);
      expectError(await search('items', { filter: {}, cursor: 'garbage!' }), 400, 'INVALID_CURSOR');
      const viewer = await search('items', { filter: { _id: 'i01' } }, viewOnly);
      expect(viewer.status, viewer.text).to.equal(200);
      expect(viewer.body.items).to.have.length(1);
    });

    it('refuses operators that run code, and forms the stores would answer differently, with 400', async () => {
      await created('guarded');
      await insert('guarded', { a: 1 }, 'g1');
      const refusals: Array<[unknown, string, string]> = [
        [{ $where: 'this.a == 1' }, 'FORBIDDEN_OPERATOR', 'body.filter.$where'],
        [{ a: { $where: 'x' } }, 'FORBIDDEN_OPERATOR', 'body.filter.a.$where'],
        [{ $expr: { $eq: ['$a', 1] } }, 'FORBIDDEN_OPERATOR', 'body.filter.$expr'],
        [{ $or: [{ $function: { body: 'return true', args: [], lang: 'js' } }] }, 'FORBIDDEN_OPERATOR', 'body.filter.$or.0.$function'],
        [{ a: { $elemMatch: { $accumulator: {} } } }, 'FORBIDDEN_OPERATOR', 'body.filter.a.$elemMatch.$accumulator'],
        [{ $text: { $search: 'x' } }, 'UNSUPPORTED_OPERATOR', 'body.filter.$text'],
        [{ a: { b: 1 } }, 'UNSUPPORTED_OPERATOR', 'body.filter.a'],
        [{ a: { $regex: '(a+)+$' } }, 'UNSUPPORTED_OPERATOR', 'body.filter.a.$regex'],
        [{ a: { $regex: '((a+))+$' } }, 'UNSUPPORTED_OPERATOR', 'body.filter.a.$regex'],
        [{ a: { $elemMatch: { x: 1 } } }, 'UNSUPPORTED_OPERATOR', 'body.filter.a.$elemMatch'],
        [{ a: { $elemMatch: { $gte: 1, $lt: 5 } } }, 'UNSUPPORTED_OPERATOR', 'body.filter.a.$elemMatch'],
        [{ 'a.$b': 1 }, 'INVALID_FILTER', 'body.filter.a.$b'],
      ];
      for (const [filter, code, path] of refusals) {
        const res = await search('guarded', { filter });
        expectError(res, 400, code);
        expect(res.body.error.details.path, JSON.stringify(filter)).to.equal(path);
      }
      let deep: Record<string, unknown> = { a: 1 };
      for (let i = 0; i < 10; i++) deep = { $and: [deep] };
      expectError(await search('guarded', { filter: deep }), 400, 'FILTER_TOO_COMPLEX');
      expectError(await search('guarded', { limit: 5000 }), 400, 'VALIDATION_FAILED');
      expectError(await search('guarded', { projection: { a: 1, b: 0 } }), 400, 'INVALID_PROJECTION');
    });

    it("answers 404 for another tenant's collection, and no filter reaches other collections", async () => {
      await created('secret');
      await insert('secret', { c: 'x', d: { secret: true }, _owner: 'me' }, 's1');
      const stranger = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, other.auth);
      expectError(await stranger('GET', '/db/collections/secret'), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('POST', '/db/collections/secret/search', { filter: {} }), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('POST', '/db/collections/secret/documents', { document: { a: 1 } }), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('PUT', '/db/collections/secret/documents/s1', { document: { a: 1 } }), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('DELETE', '/db/collections/secret/documents/s1'), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('GET', '/db/collections/secret/documents/s1/history'), 404, 'COLLECTION_NOT_FOUND');
      expectError(await stranger('DELETE', '/db/collections/secret'), 404, 'COLLECTION_NOT_FOUND');
      const listed = await stranger('GET', '/db/collections?limit=100');
      expect(listed.body.items.map((i: { name: string }) => i.name)).to.not.include('secret');
      // The stranger's own collection: filters naming stored fields (c, d, r, _id tricks) stay inside it.
      expect((await stranger('POST', '/db/collections', { name: 'mine' })).status).to.equal(201);
      expect((await stranger('POST', '/db/collections/mine/documents', { id: 'm1', document: { x: 1 } })).status).to.equal(201);
      for (const filter of [{}, { $or: [{ c: 'x' }, { x: 1 }, { 'd.secret': true }] }, { $nor: [{ x: 1 }] }, { _id: { $in: ['s1', 'm1'] } }, { r: { $exists: false } }]) {
        const res = await stranger('POST', '/db/collections/mine/search', { filter });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.items.every((d: { _id: string }) => d._id === 'm1'), JSON.stringify(filter)).to.equal(true);
      }
      const nothing = await stranger('POST', '/db/collections/mine/search', { filter: { $or: [{ c: 'x' }, { _owner: 'me' }] } });
      expect(nothing.body.items).to.deep.equal([]);
    });

    it('deletes a collection with its documents; the name is free again and starts empty', async () => {
      await created('temp');
      await insert('temp', { v: 1 }, 't1');
      await insert('temp', { v: 2 }, 't2');
      const del = await api('DELETE', '/db/collections/temp');
      expect(del.status, del.text).to.equal(200);
      expect(del.body.deletedDocuments).to.equal(2);
      expectError(await api('GET', '/db/collections/temp'), 404, 'COLLECTION_NOT_FOUND');
      expectError(await search('temp', {}), 404, 'COLLECTION_NOT_FOUND');
      const names = (await api('GET', '/db/collections?limit=100')).body.items.map((i: { name: string }) => i.name);
      expect(names).to.not.include('temp');
      // Its documents are gone from the read store, not merely hidden.
      expect(await svc.services.readStore.collection(`udocs_${String(del.body.id).replace(/[^A-Za-z0-9_]/g, '')}`).count({})).to.equal(0);
      const again = await created('temp');
      expect(again.id).to.not.equal(del.body.id);
      const empty = await search('temp', {});
      expect(empty.body.items).to.deep.equal([]);
      // The old collection's events stay in the log: its own stream, and each document's.
      const events = await svc.services.eventStore.readStream(`collection-${del.body.id}`);
      expect(events.map((e) => e.type)).to.deep.equal(['CollectionCreated', 'CollectionDeleted']);
      for (const id of ['t1', 't2']) {
        const written = await svc.services.eventStore.readStream(`document-${del.body.id}.${id}`);
        expect(written.map((e) => e.type)).to.deep.equal(['DocumentAdded']);
      }
    });

    it('shares an organization workspace\'s collections with its members, and only there', async () => {
      const { org } = await createOrg(svc, owner);
      const member = await addMember(svc, owner, org.id, 'viewer');
      const ownerInOrg = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, owner.auth)).body.token);
      const memberInOrg = bearer((await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId: org.id }, member.auth)).body.token);
      expect((await api('POST', '/db/collections', { name: 'team-notes' }, ownerInOrg)).status).to.equal(201);
      expect((await api('POST', '/db/collections/team-notes/documents', { id: 'n1', document: { t: 'hi' } }, ownerInOrg)).status).to.equal(201);
      const seen = await api('POST', '/db/collections/team-notes/search', {}, memberInOrg);
      expect(seen.status, seen.text).to.equal(200);
      expect(seen.body.items).to.deep.equal([{ _id: 'n1', t: 'hi' }]);
      expectError(await api('POST', '/db/collections/team-notes/documents', { document: { t: 'x' } }, memberInOrg), 403);
      // Not in the owner's personal workspace, nor for the member outside the organization.
      expectError(await api('GET', '/db/collections/team-notes'), 404, 'COLLECTION_NOT_FOUND');
      expectError(await api('GET', '/db/collections/team-notes', undefined, member.auth), 404, 'COLLECTION_NOT_FOUND');
      // The same name is free in the personal workspace.
      expect((await api('POST', '/db/collections', { name: 'team-notes' })).status).to.equal(201);
    });

    it('needs edit_resources to write', async () => {
      expectError(await api('POST', '/db/collections', { name: 'ro' }, viewOnly), 403);
    });
  });
}
