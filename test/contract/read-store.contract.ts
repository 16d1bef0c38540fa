/**
 * The ReadStore contract: every adapter must pass it unchanged. Expected results are computed in
 * plain JS from the generated documents, never by another store, so both adapters are held to
 * MongoDB's documented semantics rather than to each other.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Doc, DocumentCollection, Filter, Page, ReadStore, Sort, Update } from '../../ports/read-store.js';
import { DuplicateKeyError, InvalidCursorError } from '../../ports/read-store.js';

type Item = Doc & {
  n: number; score: number; name: string; kind: string; active: boolean; at: Date;
  items: Array<{ sku: string; qty: number }>; tags?: string[]; meta?: { tier: number | null; region: string }; opt?: string | null;
};

const KINDS = ['alpha', 'beta', 'gamma', 'delta'];
const COLORS = ['red', 'green', 'blue', 'black'];
const T0 = Date.UTC(2024, 0, 1);
const hour = (i: number) => new Date(T0 + i * 3_600_000);

/** 200 documents covering: missing vs null fields, empty arrays, arrays of documents, mixed int/fraction, dates, mixed case. */
function makeItem(i: number): Item {
  const doc: Item = {
    _id: `d${String(i).padStart(3, '0')}`, n: i, score: ((i * 37) % 101) + (i % 10 === 0 ? 0.5 : 0),
    name: `${i % 7 === 0 ? 'Item' : 'item'}-${i}`, kind: KINDS[i % 4], active: i % 3 === 0, at: hour(i),
    items: [{ sku: `s${i % 6}`, qty: i % 9 }, { sku: `s${(i + 1) % 6}`, qty: (i * 5) % 9 }],
  };
  if (i % 11 !== 0) doc.tags = COLORS.filter((_, bit) => (i >> bit) & 1);
  if (i % 13 !== 0) doc.meta = { tier: i % 17 === 0 ? null : i % 5, region: i % 2 ? 'eu' : 'us' };
  if (i % 19 === 0) doc.opt = null;
  else if (i % 23 === 0) doc.opt = 'x';
  return doc;
}
const ITEMS = Array.from({ length: 200 }, (_, i) => makeItem(i));

const FILTERS: Array<[string, Filter, (d: Item) => boolean]> = [
  ['equality', { kind: 'beta' }, (d) => d.kind === 'beta'],
  ['$gt', { n: { $gt: 150 } }, (d) => d.n > 150],
  ['$gte with $lt', { n: { $gte: 10, $lt: 20 } }, (d) => d.n >= 10 && d.n < 20],
  ['$lte on fractions', { score: { $lte: 10.5 } }, (d) => d.score <= 10.5],
  ['$ne', { kind: { $ne: 'alpha' } }, (d) => d.kind !== 'alpha'],
  ['$in', { kind: { $in: ['alpha', 'gamma'] } }, (d) => ['alpha', 'gamma'].includes(d.kind)],
  ['$nin', { n: { $nin: [1, 2, 3] } }, (d) => ![1, 2, 3].includes(d.n)],
  ['$and', { $and: [{ active: true }, { kind: 'alpha' }] }, (d) => d.active && d.kind === 'alpha'],
  ['$or', { $or: [{ n: { $lt: 5 } }, { n: { $gt: 195 } }] }, (d) => d.n < 5 || d.n > 195],
  ['$nor', { $nor: [{ active: true }, { kind: 'beta' }] }, (d) => !d.active && d.kind !== 'beta'],
  ['$not', { score: { $not: { $gt: 50 } } }, (d) => !(d.score > 50)],
  ['$exists false', { tags: { $exists: false } }, (d) => d.tags === undefined],
  ['$exists true counts null', { opt: { $exists: true } }, (d) => 'opt' in d],
  ['null matches null and missing', { opt: null }, (d) => d.opt === null || d.opt === undefined],
  ['$type string', { opt: { $type: 'string' } }, (d) => typeof d.opt === 'string'],
  ['$regex', { name: { $regex: '^item-1' } }, (d) => /^item-1/.test(d.name)],
  ['$regex with $options i', { name: { $regex: '^ITEM-1', $options: 'i' } }, (d) => /^item-1/i.test(d.name)],
  ['RegExp value', { name: /^Item-\d*5$/ }, (d) => /^Item-\d*5$/.test(d.name)],
  ['array contains', { tags: 'red' }, (d) => !!d.tags?.includes('red')],
  ['$all', { tags: { $all: ['red', 'blue'] } }, (d) => !!d.tags?.includes('red') && !!d.tags.includes('blue')],
  ['$size', { tags: { $size: 2 } }, (d) => d.tags?.length === 2],
  ['$size 0', { tags: { $size: 0 } }, (d) => d.tags?.length === 0],
  ['$elemMatch with $in', { tags: { $elemMatch: { $in: ['black', 'green'] } } }, (d) => !!d.tags?.some((t) => t === 'black' || t === 'green')],
  ['$elemMatch with a range', { tags: { $elemMatch: { $gte: 'b', $lt: 'c' } } }, (d) => !!d.tags?.some((t) => t >= 'b' && t < 'c')],
  ['dotted path into an array', { 'items.sku': 's3' }, (d) => d.items.some((x) => x.sku === 's3')],
  ['array index path', { 'items.1.qty': { $gt: 5 } }, (d) => d.items[1].qty > 5],
  ['dotted $in', { 'meta.tier': { $in: [1, 3] } }, (d) => d.meta?.tier === 1 || d.meta?.tier === 3],
  ['two dotted fields', { 'meta.region': 'eu', 'meta.tier': { $gt: 2 } }, (d) => d.meta?.region === 'eu' && (d.meta.tier ?? -1) > 2],
  ['dotted null', { 'meta.tier': null }, (d) => d.meta?.tier === null || d.meta === undefined],
  ['date range', { at: { $gte: hour(100), $lt: hour(110) } }, (d) => d.n >= 100 && d.n < 110],
  ['$mod', { n: { $mod: [10, 3] } }, (d) => d.n % 10 === 3],
];

type Key<T> = (keyof T & string) | ((d: T) => number | string | boolean);
/** Expected order in plain JS; `_id` always breaks ties, as in the port. */
function ordered<T extends Doc>(docs: T[], sort: Array<[Key<T>, 1 | -1]>): T[] {
  const keys = [...sort, ['_id', 1] as [Key<T>, 1]];
  const value = (d: T, k: Key<T>) => (typeof k === 'function' ? k(d) : (d[k] as never));
  return [...docs].sort((a, b) => {
    for (const [k, dir] of keys) {
      const [x, y] = [value(a, k), value(b, k)];
      if (x !== y) return x < y ? -dir : dir;
    }
    return 0;
  });
}
const ids = (docs: Doc[]) => docs.map((d) => d._id);

async function rejection(p: Promise<unknown>): Promise<Error & { code?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  return expect.fail('expected the operation to be rejected');
}

async function allPages<T extends Doc>(c: DocumentCollection<T>, filter: Filter, sort: Sort | undefined, extra: object = {}): Promise<Array<Page<T>>> {
  const pages: Array<Page<T>> = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await c.page(filter, { sort, limit: 7, cursor, ...extra });
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length, 'runaway pagination').to.be.below(100);
  } while (cursor);
  return pages;
}

export function readStoreContract(label: string, make: () => Promise<ReadStore>): void {
  describe(`ReadStore contract: ${label}`, function () {
    const run = randomBytes(4).toString('hex');
    const used = new Set<string>();
    let store: ReadStore;
    const coll = <T extends Doc = Doc>(s: string) => (used.add(`c${run}_${s}`), store.collection<T>(`c${run}_${s}`));

    before(async () => {
      store = await make();
    });
    after(async () => {
      if (!store) return;
      for (const name of used) await store.collection(name).drop();
      await store.close();
    });

    it('names its adapter and reports health', async () => {
      expect(store.adapter).to.be.a('string').and.not.equal('');
      expect(await store.health()).to.include({ ok: true });
    });

    describe('documents', () => {
      it('returns deep copies on insert and read', async () => {
        const c = coll('copies');
        const doc = { _id: 'a', nested: { list: [1, { x: 'y' }] }, at: hour(1) };
        await c.insertOne(doc);
        doc.nested.list.push(2);
        const read = (await c.findOne({ _id: 'a' }))!;
        expect(read).to.deep.equal({ _id: 'a', nested: { list: [1, { x: 'y' }] }, at: hour(1) });
        expect(read.at).to.be.instanceOf(Date);
        ((read.nested as { list: unknown[] }).list as unknown[]).push(3);
        (await c.find({}))[0].extra = true;
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', nested: { list: [1, { x: 'y' }] }, at: hour(1) });
      });

      it('stores undefined as null, as the MongoDB driver does', async () => {
        const c = coll('undefined');
        await c.insertOne({ _id: 'a', u: undefined, list: [1, undefined], o: { x: undefined } });
        await c.updateOne({ _id: 'a' }, { $set: { v: undefined } });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', u: null, list: [1, null], o: { x: null }, v: null });
      });

      it('answers null and [] when nothing matches', async () => {
        const c = coll('empty');
        expect(await c.findOne({ _id: 'none' })).to.equal(null);
        expect(await c.find({ x: 1 })).to.deep.equal([]);
        expect(await c.count()).to.equal(0);
      });

      it('refuses a duplicate _id and keeps the original', async () => {
        const c = coll('dup');
        await c.insertOne({ _id: 'a', v: 1 });
        expect(await rejection(c.insertOne({ _id: 'a', v: 2 }))).to.be.instanceOf(DuplicateKeyError);
        expect(await c.find({})).to.deep.equal([{ _id: 'a', v: 1 }]);
      });

      it('replaces whole documents, upserting when asked', async () => {
        const c = coll('replace');
        await c.insertOne({ _id: 'a', v: 1, gone: true });
        expect(await c.replaceOne({ v: 1 }, { _id: 'a', v: 2 })).to.deep.equal({ matched: 1, modified: 1, upserted: false });
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', v: 2 });
        expect(await c.replaceOne({ _id: 'b' }, { _id: 'b', v: 3 })).to.deep.equal({ matched: 0, modified: 0, upserted: false });
        expect(await c.replaceOne({ _id: 'b' }, { _id: 'b', v: 3 }, { upsert: true })).to.deep.equal({ matched: 0, modified: 0, upserted: true });
        expect(await c.findOne({ _id: 'b' })).to.deep.equal({ _id: 'b', v: 3 });
      });

      it('refuses to change _id or to apply an operator to the wrong type, leaving the document as it was', async () => {
        const c = coll('immutable');
        await c.insertOne({ _id: 'a', s: 'text' });
        await rejection(c.updateOne({ _id: 'a' }, { $set: { _id: 'b' } }));
        await rejection(c.updateOne({ _id: 'a' }, { $inc: { s: 1 } }));
        await rejection(c.updateOne({ _id: 'a' }, { $push: { s: 1 } }));
        expect(await c.find({})).to.deep.equal([{ _id: 'a', s: 'text' }]);
      });

      it('deletes one or many and says how many', async () => {
        const c = coll('delete');
        for (let i = 0; i < 5; i++) await c.insertOne({ _id: `d${i}`, even: i % 2 === 0 });
        expect(await c.deleteOne({ even: false })).to.equal(1);
        expect(await c.deleteOne({ _id: 'nope' })).to.equal(0);
        expect(await c.deleteMany({ even: true })).to.equal(3);
        expect(await c.count()).to.equal(1);
        expect(await c.deleteMany({})).to.equal(1);
        expect(await c.count()).to.equal(0);
      });
    });

    describe('update operators', () => {
      const cases: Array<[string, Record<string, unknown>, Update, Record<string, unknown>]> = [
        ['$set, creating nested parents', { a: 1, o: { x: 1 } }, { $set: { a: 2, 'o.y.z': 3 } }, { a: 2, o: { x: 1, y: { z: 3 } } }],
        ['$unset', { a: 1, b: 2, o: { x: 1, y: 2 } }, { $unset: { b: '', 'o.x': '', none: '' } }, { a: 1, o: { y: 2 } }],
        ['$inc, creating missing fields', { n: 5 }, { $inc: { n: -2, m: 3, 'o.c': 1.5 } }, { n: 3, m: 3, o: { c: 1.5 } }],
        ['$push', { arr: [1] }, { $push: { arr: 2, fresh: 'a' } }, { arr: [1, 2], fresh: ['a'] }],
        ['$push with $each', { arr: [1] }, { $push: { arr: { $each: [2, 3] } } }, { arr: [1, 2, 3] }],
        ['$pull by value', { arr: [1, 2, 1, 3] }, { $pull: { arr: 1 } }, { arr: [2, 3] }],
        ['$pull of a date', { ds: [hour(1), hour(2)], keep: [1] }, { $pull: { ds: hour(1), keep: 2 } }, { ds: [hour(2)], keep: [1] }],
        ['$addToSet', { s: ['a'] }, { $addToSet: { s: 'a', t: 'x' } }, { s: ['a'], t: ['x'] }],
        ['$addToSet with $each', { s: ['a'] }, { $addToSet: { s: { $each: ['b', 'a', 'c'] } } }, { s: ['a', 'b', 'c'] }],
        ['$min', { lo: 5, hi: 5 }, { $min: { lo: 3, hi: 9, none: 1 } }, { lo: 3, hi: 5, none: 1 }],
        ['$max', { lo: 5, hi: 5, at: hour(1) }, { $max: { lo: 3, hi: 9, at: hour(2) } }, { lo: 5, hi: 9, at: hour(2) }],
        ['$setOnInsert is ignored on an existing document', { a: 1 }, { $setOnInsert: { b: 2 }, $set: { c: 3 } }, { a: 1, c: 3 }],
      ];
      cases.forEach(([name, initial, update, expected], i) => {
        it(name, async () => {
          const c = coll('ops');
          await c.insertOne({ _id: `op${i}`, ...initial });
          expect(await c.updateOne({ _id: `op${i}` }, update)).to.deep.equal({ matched: 1, modified: 1, upserted: false });
          expect(await c.findOne({ _id: `op${i}` })).to.deep.equal({ _id: `op${i}`, ...expected });
        });
      });

      it('counts a no-op update as matched, not modified', async () => {
        const c = coll('noop');
        await c.insertOne({ _id: 'a', v: 1, s: [1] });
        expect(await c.updateOne({ _id: 'a' }, { $set: { v: 1 }, $addToSet: { s: 1 } })).to.deep.equal({ matched: 1, modified: 0, upserted: false });
        expect(await c.updateOne({ _id: 'zz' }, { $set: { v: 1 } })).to.deep.equal({ matched: 0, modified: 0, upserted: false });
      });

      it('updateMany updates every match', async () => {
        const c = coll('many');
        for (let i = 0; i < 6; i++) await c.insertOne({ _id: `m${i}`, g: i % 3, hits: 0 });
        expect(await c.updateMany({ g: { $ne: 0 } }, { $inc: { hits: 1 } })).to.deep.equal({ matched: 4, modified: 4, upserted: false });
        expect(ids(await c.find({ hits: 1 })).sort()).to.deep.equal(['m1', 'm2', 'm4', 'm5']);
      });

      it('upserts from the filter equality fields, and $setOnInsert only on insert', async () => {
        const c = coll('upsert');
        const filter = { _id: 'u1', kind: 'alpha', 'meta.tier': 2, n: { $gt: 5 } };
        const res = await c.updateOne(filter, { $set: { x: 1 }, $setOnInsert: { created: 1 } }, { upsert: true });
        expect(res).to.deep.equal({ matched: 0, modified: 0, upserted: true });
        expect(await c.findOne({ _id: 'u1' })).to.deep.equal({ _id: 'u1', kind: 'alpha', meta: { tier: 2 }, x: 1, created: 1 });
        await c.updateOne({ _id: 'u1' }, { $set: { x: 2 }, $setOnInsert: { created: 2 } }, { upsert: true });
        expect(await c.findOne({ _id: 'u1' })).to.deep.equal({ _id: 'u1', kind: 'alpha', meta: { tier: 2 }, x: 2, created: 1 });
      });

      it('gives an upserted document a string _id when the filter has none', async () => {
        const c = coll('upsert_id');
        expect((await c.updateOne({ kind: 'solo' }, { $set: { v: 1 } }, { upsert: true })).upserted).to.equal(true);
        const doc = (await c.findOne({ kind: 'solo' }))!;
        expect(doc._id).to.be.a('string').with.length.above(0);
        expect(doc).to.deep.equal({ _id: doc._id, kind: 'solo', v: 1 });
      });
    });

    describe('bulk writes', () => {
      it('apply replacements, updates, upserts and deletes in order, and count them', async () => {
        const c = coll('bulk');
        await c.insertOne({ _id: 'a', v: 1, n: 0 });
        await c.insertOne({ _id: 'gone', v: 1 });
        const r = await c.bulkWrite([
          { replaceOne: { filter: { _id: 'a', v: 1 }, replacement: { _id: 'a', v: 2, n: 1 } } },
          { updateOne: { filter: { _id: 'a' }, update: { $inc: { n: 10 }, $set: { v: 3 } } } },
          { replaceOne: { filter: { _id: 'b', v: { $lt: 5 } }, replacement: { _id: 'b', v: 5 }, upsert: true } },
          { updateOne: { filter: { _id: 'c' }, update: { $set: { v: 1 } }, upsert: true } },
          { updateOne: { filter: { _id: 'missing' }, update: { $set: { v: 1 } } } },
          { replaceOne: { filter: { _id: 'b', v: 5 }, replacement: { _id: 'b', v: 5 } } },
          { deleteOne: { filter: { _id: 'gone' } } },
        ]);
        expect(r).to.deep.equal({ matched: 3, modified: 2, upserted: 2, deleted: 1 });
        expect(await c.find({}, { sort: { _id: 1 } })).to.deep.equal([
          { _id: 'a', v: 3, n: 11 }, { _id: 'b', v: 5 }, { _id: 'c', v: 1 },
        ]);
        expect(await c.bulkWrite([])).to.deep.equal({ matched: 0, modified: 0, upserted: 0, deleted: 0 });
      });

      it('stop at a refused write: a version-guarded upsert of a newer document, or a unique key', async () => {
        const c = coll('bulk_guard');
        await c.insertOne({ _id: 'a', version: 7, s: 'new' });
        const guarded = await rejection(c.bulkWrite([
          { replaceOne: { filter: { _id: 'b', version: { $lt: 1 } }, replacement: { _id: 'b', version: 1, s: 'b' }, upsert: true } },
          { replaceOne: { filter: { _id: 'a', version: { $lt: 3 } }, replacement: { _id: 'a', version: 3, s: 'old' }, upsert: true } },
          { updateOne: { filter: { _id: 'b', version: 1 }, update: { $set: { version: 2 } } } },
        ]));
        expect(guarded).to.be.instanceOf(DuplicateKeyError);
        // The write before the refused one stands, the one after it was not made.
        expect(await c.find({}, { sort: { _id: 1 } })).to.deep.equal([{ _id: 'a', version: 7, s: 'new' }, { _id: 'b', version: 1, s: 'b' }]);
        const u = coll('bulk_unique');
        await u.createIndex({ keys: { email: 1 }, unique: true });
        await u.insertOne({ _id: 'a', email: 'a@x' });
        expect(await rejection(u.bulkWrite([
          { updateOne: { filter: { _id: 'b' }, update: { $set: { email: 'a@x' } }, upsert: true } },
          { updateOne: { filter: { _id: 'c' }, update: { $set: { email: 'c@x' } }, upsert: true } },
        ]))).to.be.instanceOf(DuplicateKeyError);
        expect(ids(await u.find({}, { sort: { _id: 1 } }))).to.deep.equal(['a']);
      });

      it('refuse what the single writes refuse, before writing anything', async () => {
        const c = coll('bulk_refuse');
        await c.insertOne({ _id: 'a', v: 1 });
        const ops = (bad: object) => [{ updateOne: { filter: { _id: 'a' }, update: { $set: { v: 2 } } } }, bad] as never;
        expect(await rejection(c.bulkWrite(ops({ updateOne: { filter: { _id: 'a' }, update: { $where: 'x' } } })))).to.be.instanceOf(Error);
        expect(await rejection(c.bulkWrite(ops({ replaceOne: { filter: { _id: 'a' }, replacement: { _id: 'a', $set: { x: 1 } } } })))).to.be.instanceOf(Error);
        expect(await rejection(c.bulkWrite(ops({ deleteOne: { filter: { $where: 'true' } } })))).to.be.instanceOf(Error);
        expect(await c.findOne({ _id: 'a' })).to.deep.equal({ _id: 'a', v: 1 });
      });
    });

    describe('unique indexes', () => {
      it('refuse inserts, updates, replacements and upserts that would duplicate a key', async () => {
        const c = coll('unique');
        await c.createIndex({ keys: { email: 1 }, unique: true });
        await c.createIndex({ keys: { email: 1 }, unique: true }); // idempotent
        await c.insertOne({ _id: 'a', email: 'a@x' });
        await c.insertOne({ _id: 'b', email: 'b@x' });
        expect(await rejection(c.insertOne({ _id: 'c', email: 'a@x' }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(c.updateOne({ _id: 'b' }, { $set: { email: 'a@x' } }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(c.replaceOne({ _id: 'b' }, { _id: 'b', email: 'a@x' }))).to.be.instanceOf(DuplicateKeyError);
        expect(await rejection(c.updateOne({ _id: 'n' }, { $set: { email: 'b@x' } }, { upsert: true }))).to.be.instanceOf(DuplicateKeyError);
        expect(ids(await c.find({}, { sort: { _id: 1 } }))).to.deep.equal(['a', 'b']);
        expect(await c.findOne({ _id: 'b' })).to.deep.equal({ _id: 'b', email: 'b@x' });
        await c.updateOne({ _id: 'b' }, { $set: { email: 'c@x' } }); // frees b@x
        await c.insertOne({ _id: 'd', email: 'b@x' });
      });

      it('compare compound keys on all fields together', async () => {
        const c = coll('compound');
        await c.createIndex({ keys: { tenant: 1, slug: 1 }, unique: true, name: 'tenant_slug' });
        await c.insertOne({ _id: 'a', tenant: 't1', slug: 's' });
        await c.insertOne({ _id: 'b', tenant: 't2', slug: 's' });
        await c.insertOne({ _id: 'c', tenant: 't1', slug: 'r' });
        expect(await rejection(c.insertOne({ _id: 'd', tenant: 't2', slug: 's' }))).to.be.instanceOf(DuplicateKeyError);
      });

      it('cannot be built over existing duplicates', async () => {
        const c = coll('late_unique');
        await c.insertOne({ _id: 'a', k: 1 });
        await c.insertOne({ _id: 'b', k: 1 });
        expect(await rejection(c.createIndex({ keys: { k: 1 }, unique: true }))).to.be.instanceOf(DuplicateKeyError);
        await c.insertOne({ _id: 'c', k: 1 });
      });
    });

    describe('queries over 200 documents', () => {
      let items: DocumentCollection<Item>;
      before(async function () {
        this.timeout(60_000);
        items = coll<Item>('items');
        for (const doc of ITEMS) await items.insertOne(doc);
      });

      for (const [name, filter, predicate] of FILTERS) {
        it(`filter: ${name}`, async () => {
          const expected = ITEMS.filter(predicate).map((d) => d._id);
          expect(expected.length, 'the fixture must make this filter selective').to.be.within(1, ITEMS.length - 1);
          expect(ids(await items.find(filter)).sort()).to.deep.equal(expected);
          expect(await items.count(filter)).to.equal(expected.length);
        });
      }

      it('counts everything without a filter', async () => {
        expect(await items.count()).to.equal(ITEMS.length);
        expect(await items.count({})).to.equal(ITEMS.length);
      });

      it('sorts by several keys in both directions', async () => {
        expect(ids(await items.find({}, { sort: { kind: 1, score: -1, _id: 1 } }))).to.deep.equal(ids(ordered(ITEMS, [['kind', 1], ['score', -1]])));
        expect(ids(await items.find({}, { sort: { active: -1, n: 1 } }))).to.deep.equal(ids(ordered(ITEMS, [['active', -1], ['n', 1]])));
        expect(ids(await items.find({}, { sort: { name: 1 } }))).to.deep.equal(ids(ordered(ITEMS, [['name', 1]])));
        expect(ids(await items.find({}, { sort: { at: -1 } }))).to.deep.equal(ids(ordered(ITEMS, [['n', -1]])));
      });

      it('sorts missing like null, below numbers', async () => {
        const tier = (d: Item) => d.meta?.tier ?? -1;
        expect(ids(await items.find({}, { sort: { 'meta.tier': 1 } }))).to.deep.equal(ids(ordered(ITEMS, [[tier, 1]])));
        expect(ids(await items.find({}, { sort: { 'meta.tier': -1, _id: 1 } }))).to.deep.equal(ids(ordered(ITEMS, [[tier, -1]])));
      });

      // Top-level arrays only: FerretDB v1.24 mis-sorts paths through arrays of documents ('items.qty').
      it('sorts an array by its smallest element ascending, its largest descending, [] below null', async () => {
        const rank = (pick: (t: string[]) => string) => (d: Item) => (!d.tags ? '1' : d.tags.length ? `2${pick(d.tags)}` : '0');
        const [min, max] = [(t: string[]) => [...t].sort()[0], (t: string[]) => [...t].sort().at(-1)!];
        expect(ids(await items.find({}, { sort: { tags: 1 } }))).to.deep.equal(ids(ordered(ITEMS, [[rank(min), 1]])));
        expect(ids(await items.find({}, { sort: { tags: -1 } }))).to.deep.equal(ids(ordered(ITEMS, [[rank(max), -1]])));
      });

      it('applies skip and limit after sorting', async () => {
        expect(ids(await items.find({ kind: 'beta' }, { sort: { n: -1 }, skip: 3, limit: 4 }))).to.deep.equal(['d185', 'd181', 'd177', 'd173']);
        expect((await items.findOne({ active: true }, { sort: { n: -1 } }))?._id).to.equal('d198');
      });

      it('projects included paths, excluded paths and _id', async () => {
        const d = ITEMS[42] as Item & { meta: { tier: number; region: string } };
        expect(await items.findOne({ _id: d._id }, { projection: { name: 1, 'meta.tier': 1 } })).to.deep.equal({ _id: d._id, name: d.name, meta: { tier: d.meta.tier } });
        expect(await items.findOne({ _id: d._id }, { projection: { n: 1, _id: 0 } })).to.deep.equal({ n: 42 });
        const { items: _i, meta: _m, ...rest } = d;
        expect(await items.findOne({ _id: d._id }, { projection: { items: 0, meta: 0 } })).to.deep.equal(rest);
        expect(await items.find({ n: { $lt: 3 } }, { projection: { 'items.sku': 1 }, sort: { n: 1 } })).to.deep.equal(
          ITEMS.slice(0, 3).map((x) => ({ _id: x._id, items: x.items.map((it) => ({ sku: it.sku })) })),
        );
      });
    });

    describe('pagination', () => {
      let items: DocumentCollection<Item>;
      before(async function () {
        this.timeout(60_000);
        items = coll<Item>('pages');
        for (const doc of ITEMS) await items.insertOne(doc);
      });

      it('walks all pages of 7 in sort order, every document exactly once', async () => {
        const pages = await allPages(items, { n: { $lt: 150 } }, { kind: 1, score: -1 });
        const expected = ids(ordered(ITEMS.filter((d) => d.n < 150), [['kind', 1], ['score', -1]]));
        expect(pages.slice(0, -1).every((p) => p.items.length === 7)).to.equal(true);
        expect(pages.at(-1)!.items.length).to.equal(150 % 7);
        expect(pages.flatMap((p) => ids(p.items))).to.deep.equal(expected);
      });

      it('orders by _id without a sort and stops at an exactly full last page', async () => {
        const pages = await allPages(items, { n: { $lt: 14 } }, undefined);
        expect(pages.map((p) => ids(p.items))).to.deep.equal([ITEMS.slice(0, 7).map((d) => d._id), ITEMS.slice(7, 14).map((d) => d._id)]);
        expect(pages[1].nextCursor).to.equal(null);
      });

      it('pages on dates, descending', async () => {
        const pages = await allPages(items, { kind: 'gamma' }, { at: -1 });
        expect(pages.flatMap((p) => ids(p.items))).to.deep.equal(ids(ordered(ITEMS.filter((d) => d.kind === 'gamma'), [['n', -1]])));
      });

      it('keeps paging when the projection leaves the sort keys out', async () => {
        const incl = await allPages(items, { active: true }, { score: 1 }, { projection: { name: 1 } });
        const expected = ordered(ITEMS.filter((d) => d.active), [['score', 1]]);
        expect(incl.flatMap((p) => p.items)).to.deep.equal(expected.map((d) => ({ _id: d._id, name: d.name })));
        const excl = await allPages(items, { active: true }, { score: 1 }, { projection: { score: 0, items: 0, tags: 0, meta: 0, at: 0, _id: 0 } });
        expect(excl.flatMap((p) => p.items)).to.deep.equal(expected.map((d) => ({ n: d.n, name: d.name, kind: d.kind, active: d.active, ...('opt' in d ? { opt: d.opt } : {}) })));
      });

      it('rejects malformed cursors and cursors made for another sort', async () => {
        const first = await items.page({}, { sort: { n: 1 }, limit: 3 });
        expect(first.nextCursor).to.be.a('string');
        for (const cursor of ['not a cursor!', 'abc', Buffer.from('{"f":"x","v":[]}').toString('base64url')]) {
          expect(await rejection(items.page({}, { sort: { n: 1 }, limit: 3, cursor }))).to.be.instanceOf(InvalidCursorError);
        }
        expect(await rejection(items.page({}, { sort: { n: -1 }, limit: 3, cursor: first.nextCursor }))).to.be.instanceOf(InvalidCursorError);
        expect(ids((await items.page({}, { sort: { n: 1 }, limit: 3, cursor: first.nextCursor })).items)).to.deep.equal(['d003', 'd004', 'd005']);
      });
    });

    describe('collections', () => {
      it('lists created collections, not internal ones', async () => {
        await coll('listed').insertOne({ _id: 'a' });
        await store.checkpoints.set(`cp${run}_list`, 1);
        const names = await store.listCollections();
        expect(names).to.include(`c${run}_listed`);
        expect(names.filter((n) => n.includes('checkpoint'))).to.deep.equal([]);
        await store.checkpoints.delete(`cp${run}_list`);
      });

      it('drop removes documents and indexes, and the collection can be used again', async () => {
        const c = coll('dropme');
        await c.createIndex({ keys: { k: 1 }, unique: true });
        await c.insertOne({ _id: 'a', k: 1 });
        await c.drop();
        expect(await c.count()).to.equal(0);
        expect(await store.listCollections()).to.not.include(`c${run}_dropme`);
        await c.insertOne({ _id: 'a', k: 1 });
        await c.insertOne({ _id: 'b', k: 1 });
        expect(await c.count()).to.equal(2);
        expect(await store.listCollections()).to.include(`c${run}_dropme`);
        await c.drop();
        await c.drop(); // dropping a missing collection is not an error
      });
    });

    it('stores checkpoints: get, set (also backwards), delete, list', async () => {
      const [a, b] = [`cp${run}_a`, `cp${run}_b`];
      const cp = store.checkpoints;
      expect(await cp.get(a)).to.equal(null);
      await cp.set(b, 7);
      await cp.set(a, 10);
      await cp.set(a, 4);
      expect(await cp.get(a)).to.equal(4);
      expect((await cp.list()).filter((x) => x.name.startsWith(`cp${run}_`))).to.deep.equal([{ name: a, position: 4 }, { name: b, position: 7 }]);
      await cp.delete(a);
      await cp.delete(b);
      expect(await cp.get(a)).to.equal(null);
      expect((await cp.list()).filter((x) => x.name.startsWith(`cp${run}_`))).to.deep.equal([]);
    });

    describe('what some servers get wrong is refused everywhere', () => {
      const attempts: Array<[string, (c: DocumentCollection) => Promise<unknown>]> = [
        ['$elemMatch with fields of document elements', (c) => c.find({ l: { $elemMatch: { k: 'a' } } })],
        ['$elemMatch with $and', (c) => c.count({ arr: { $elemMatch: { $and: [{ $gt: 1 }] } } })],
        ['$pull by condition', (c) => c.updateOne({ _id: 'a' }, { $pull: { arr: { $gte: 5 } } })],
        ['$pull by document', (c) => c.updateMany({}, { $pull: { l: { k: 'a' } } })],
        ['$pull by regex', (c) => c.updateOne({ _id: 'a' }, { $pull: { l: /a/ } })],
        ['$push with $slice', (c) => c.updateOne({ _id: 'a' }, { $push: { arr: { $each: [9], $slice: -2 } } })],
        ['$unset of an array element', (c) => c.updateOne({ _id: 'a' }, { $unset: { 'arr.0': '' } })],
        ['an array pushed into an array', (c) => c.updateOne({ _id: 'a' }, { $push: { arr: [1] } })],
        ['nested arrays in a document', (c) => c.insertOne({ _id: 'b', m: [[1]] })],
      ];
      for (const [name, attempt] of attempts) {
        it(`refuses ${name}`, async () => {
          const c = coll('portable');
          const doc = { _id: 'a', arr: [1, 5, 8], l: [{ k: 'a' }, { k: 'b' }] };
          if (!(await c.count())) await c.insertOne(doc);
          expect((await rejection(attempt(c))).code).to.equal('UNSUPPORTED');
          expect(await c.find({})).to.deep.equal([doc]);
        });
      }
    });

    describe('forbidden operators', () => {
      const fn = { $function: { body: 'function () { return true; }', args: [], lang: 'js' } };
      const acc = { $accumulator: { init: 'function () {}', accumulate: 'function () {}', accumulateArgs: [], merge: 'function () {}', lang: 'js' } };
      const attempts: Array<[string, (c: DocumentCollection) => Promise<unknown>]> = [
        ['$where in find', (c) => c.find({ $where: 'true' })],
        ['$where nested in $or, in count', (c) => c.count({ $or: [{ a: 1 }, { $where: 'true' }] })],
        ['$function in $expr, in findOne', (c) => c.findOne({ $expr: fn })],
        ['$accumulator in page', (c) => c.page({ $expr: { $eq: [acc, 1] } }, { limit: 2 })],
        ['$where in an update filter', (c) => c.updateMany({ $where: 'true' }, { $set: { x: 1 } })],
        ['$where in a delete filter', (c) => c.deleteMany({ $and: [{ $where: 'true' }] })],
      ];
      for (const [name, attempt] of attempts) {
        it(`refuses ${name}`, async () => {
          const c = coll('forbidden');
          if (!(await c.count())) await c.insertOne({ _id: 'a', a: 1 });
          expect((await rejection(attempt(c))).code).to.equal('FORBIDDEN_OPERATOR');
          expect(await c.find({})).to.deep.equal([{ _id: 'a', a: 1 }]);
        });
      }
    });
  });
}
