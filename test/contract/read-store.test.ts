/**
 * Runs the ReadStore contract on the embedded adapters (memory, SQLite) always, and on MongoDB (or FerretDB) when
 * MONGODB_URL is set, in a throwaway database dropped afterwards.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import { readStoreContract } from './read-store.contract.js';
import { onMongo } from '../support/on-mongo.js';

readStoreContract('memory', async () => new MemoryReadStore());
readStoreContract('sqlite', async () => new SqliteReadStore(join(mkdtempSync(join(tmpdir(), 'rs-')), 'read-models.db')));

// A prefix, so the run also checks that collection names are mapped both ways.
onMongo('read-store contract on MongoDB', 'contract', (connect) => readStoreContract('mongodb', () => connect({ prefix: 'rs_' })));
