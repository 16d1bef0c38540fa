/**
 * Runs the ReadStore contract on the embedded adapter always, and on MongoDB (or FerretDB) when
 * MONGODB_URL is set, in a throwaway database dropped afterwards.
 */
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { readStoreContract } from './read-store.contract.js';
import { onMongo } from '../support/on-mongo.js';

readStoreContract('memory', async () => new MemoryReadStore());

// A prefix, so the run also checks that collection names are mapped both ways.
onMongo('read-store contract on MongoDB', 'contract', (connect) => readStoreContract('mongodb', () => connect({ prefix: 'rs_' })));
