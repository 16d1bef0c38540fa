import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { MongoReadStore } from '../../infra/read-store/mongo.js';

/**
 * Registers `register` under `describe(title)` against a throwaway MongoDB database (dropped
 * afterwards) when MONGODB_URL is set. Without it: a failing test when REQUIRE_SERVERS=true,
 * else one SKIP line naming what did not run.
 */
export function onMongo(title: string, dbPrefix: string, register: (connect: (options?: { prefix?: string }) => Promise<MongoReadStore>) => void) {
  const url = process.env.MONGODB_URL;
  if (!url) {
    if (process.env.REQUIRE_SERVERS === 'true') {
      describe(title, () => {
        it('has a server to run against', () => {
          throw new Error('MONGODB_URL is required when REQUIRE_SERVERS=true');
        });
      });
    } else {
      console.log(`SKIP ${title}: MONGODB_URL is not set`);
    }
    return;
  }
  const dbName = `${dbPrefix}_${randomBytes(6).toString('hex')}`;
  describe(title, () => {
    after(async () => {
      const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000 });
      try {
        await client.connect();
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    });
    register((options) => MongoReadStore.connect(url, dbName, options));
  });
}
