/**
 * Preloaded into a service process (`node --import tsx --import <this>`): after SIGUSR2, the next
 * projection batch on the SQLite read store kills the process with SIGKILL once its writes and its
 * checkpoint are applied inside the transaction and before it commits, the worst moment for a crash.
 * It says so on stderr first, so a test can tell that the kill happened inside a batch.
 */
import { SqliteReadStore } from '../../infra/read-store/sqlite.js';
import type { ReadStore } from '../../ports/read-store.js';

let armed = false;
process.on('SIGUSR2', () => {
  armed = true;
});

const atomically = SqliteReadStore.prototype.atomically;
SqliteReadStore.prototype.atomically = function <T>(this: SqliteReadStore, fn: (batch: ReadStore) => Promise<T>): Promise<T> {
  return atomically.call(this, async (batch: ReadStore) => {
    const out = await fn(batch);
    if (armed && this.db.inTransaction) {
      process.stderr.write('KILLED INSIDE A PROJECTION BATCH\n');
      process.kill(process.pid, 'SIGKILL');
      await new Promise(() => {});
    }
    return out;
  }) as Promise<T>;
};
