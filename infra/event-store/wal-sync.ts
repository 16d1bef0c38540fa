import { closeSync, fdatasync, openSync } from 'node:fs';

/** How a WAL file is flushed to disk: `fs.fdatasync` by default (a test gives its own). */
export type SyncFile = (fd: number, done: (err: Error | null) => void) => void;

/**
 * Group fsync of a SQLite WAL file, off the event loop (issue 29). The event store commits its
 * appends with `synchronous=NORMAL` (the WAL is written, not synced) and acknowledges them only
 * once a later `fdatasync` of the WAL returned: every commit made before a sync starts is on disk
 * when it ends. One sync runs at a time, in libuv's thread pool; the commits that arrive meanwhile
 * share the next one. With `synchronous=FULL` SQLite synced inside each commit, on the event loop,
 * and nothing else ran meanwhile.
 */
export class WalSync {
  private fd: number | null = null;
  private running: Promise<void> | null = null;
  private waiting: Array<(err: Error | null) => void> = [];

  constructor(
    private readonly walPath: string,
    private readonly syncFile: SyncFile = fdatasync,
  ) {}

  /** Calls `done` once everything committed to the WAL before this call is on disk. */
  request(done: (err: Error | null) => void): void {
    this.waiting.push(done);
    if (!this.running) this.next();
  }

  private next(): void {
    const group = this.waiting;
    this.waiting = [];
    if (group.length === 0) {
      this.running = null;
      return;
    }
    this.running = new Promise<void>((resolve) => {
      const finish = (err: Error | null) => {
        for (const done of group) {
          try {
            done(err);
          } catch {
            // A waiter's failure is its own; the others are still told.
          }
        }
        resolve();
        this.next();
      };
      try {
        // Opened at the first sync: SQLite creates the WAL file at the first write. Read-write, as some
        // systems refuse to sync a descriptor opened read-only (Linux does not).
        this.fd ??= openSync(this.walPath, 'r+');
        this.syncFile(this.fd, finish);
      } catch (err) {
        finish(err as Error);
      }
    });
  }

  /** Waits for the syncs asked for so far, then closes the file. */
  async close(): Promise<void> {
    while (this.running) await this.running;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
