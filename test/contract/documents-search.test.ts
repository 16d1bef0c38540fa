import { expect } from 'chai';
import { translateFilter, translateSort, checkProjection } from '../../domain/documents/index.js';
import { QueryTimeoutError, type ReadStore } from '../../ports/read-store.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { physicalCollection } from '../../projections/documents.js';
import { searchDocuments } from '../../projections/documents-search.js';
import { onMongo } from '../support/on-mongo.js';
import { CASES, compareFor, generateDocuments, projectByHand } from './documents-search-cases.js';

/**
 * The same table of searches against the embedded read store and the MongoDB-wire server
 * (FerretDB here): each answer must equal the one computed by hand, in order, through every page.
 */
const LIMITS = { maxDepth: 8, maxNodes: 200, maxList: 1000, maxRegexLength: 256 };
const COLLECTION_ID = 'search-suite';
const docs = generateDocuments();

function searchSuite(label: string, open: () => Promise<ReadStore>, close: (s: ReadStore) => Promise<void>) {
  describe(`Document search table (${label})`, function () {
    this.timeout(120_000);
    let store: ReadStore;
    before(async () => {
      store = await open();
      const coll = store.collection(physicalCollection(COLLECTION_ID));
      await coll.drop();
      for (const { _id, ...d } of docs) await coll.insertOne({ _id, r: 1, d });
    });
    after(async () => close(store));

    for (const c of CASES) {
      it(c.name, async () => {
        const expected = docs.filter(c.expect);
        if (c.sort) expected.sort(compareFor(c.sort));
        const want = expected.map((d) => (c.projection ? projectByHand(d, c.projection) : d));
        const got: unknown[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await searchDocuments(store, COLLECTION_ID, {
            filter: translateFilter(c.filter, LIMITS),
            sort: translateSort(c.sort, 5),
            projection: checkProjection(c.projection, 50),
            limit: 70,
            cursor,
            maxTimeMS: 10_000,
            maxOffset: 100_000,
          });
          got.push(...page.items);
          cursor = page.nextCursor;
          expect(++pages).to.be.below(10);
        } while (cursor);
        if (c.sort || c.projection) expect(got, JSON.stringify(c.filter)).to.deep.equal(want);
        else expect(got.map((d: any) => d._id), JSON.stringify(c.filter)).to.deep.equal(want.map((d) => d._id));
      });
    }

    it('stops a search at its time limit with QueryTimeoutError', async () => {
      // The embedded store checks its clock while scanning: give it enough rows to scan.
      let collectionId = COLLECTION_ID;
      if (store instanceof MemoryReadStore) {
        collectionId = 'search-suite-big';
        const big = store.collection(physicalCollection(collectionId));
        for (let i = 0; i < 30_000; i++) await big.insertOne({ _id: `b${i}`, r: 1, d: { s: `x${i}` } });
      }
      const filter = translateFilter({ s: { $regex: 'x1.*9' }, name: { $regex: 'a.*e' } }, LIMITS);
      let caught: unknown = null;
      try {
        await searchDocuments(store, collectionId, { filter, sort: { 'd.price': -1 }, limit: 5, maxTimeMS: 1, maxOffset: 100_000 });
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(QueryTimeoutError);
    });

    it('has a table that discriminates (not every case matches everything or nothing)', () => {
      const sizes = CASES.filter((c) => c.name !== 'everything').map((c) => docs.filter(c.expect).length);
      expect(sizes.filter((n) => n > 0 && n < docs.length).length).to.be.above(CASES.length - 10);
    });
  });
}

searchSuite('embedded', async () => new MemoryReadStore(), async () => undefined);
onMongo('Document search table (MongoDB wire)', 'docsearch', (connect) => {
  searchSuite('MongoDB wire', () => connect(), (s) => s.close());
});
