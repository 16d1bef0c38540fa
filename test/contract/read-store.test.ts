/**
 * Runs the ReadStore contract on the embedded adapter always, and on MongoDB (or FerretDB) when
 * MONGODB_URL is set, in a throwaway database dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { MongoReadStore } from '../../infra/read-store/mongo.js';
import { readStoreContract } from './read-store.contract.js';

readStoreContract('memory', async () => new MemoryReadStore());

const url = process.env.MONGODB_URL;
if (url) {
  const dbName = `contract_${randomBytes(6).toString('hex')}`;
  describe('read store on MongoDB', () => {
    after(async () => {
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
      try {
        await client.connect();
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    });
    // A prefix, so the run also checks that collection names are mapped both ways.
    readStoreContract('mongodb', () => MongoReadStore.connect(url, dbName, { prefix: 'rs_' }));
  });
} else if (process.env.REQUIRE_SERVERS === 'true') {
  describe('read store on MongoDB', () => {
    it('has a server to run against', () => {
      throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
    });
  });
} else {
  console.log('SKIP read-store contract on MongoDB: MONGODB_URL is not set');
}
