import type Database from 'better-sqlite3';
import type { Lease, LeaseStore } from '../../ports/lease.js';

type Row = { holder: string; token: number; expires_at: number };

/**
 * The relay lease beside the checkpoints in the embedded file, for Kafka without MongoDB: it
 * elects among processes sharing that file (one host). An IMMEDIATE transaction takes the write
 * lock first, so the read-then-write is atomic across processes.
 */
export class SqliteLeaseStore implements LeaseStore {
  private readonly stmts;
  private readonly take;

  constructor(db: Database.Database, private readonly now: () => number = Date.now) {
    db.exec('CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, token INTEGER NOT NULL, expires_at INTEGER NOT NULL)');
    this.stmts = {
      get: db.prepare<[string], Row>('SELECT holder, token, expires_at FROM leases WHERE name = ?'),
      put: db.prepare('INSERT INTO leases (name, holder, token, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at'),
      release: db.prepare('UPDATE leases SET expires_at = 0 WHERE name = ? AND holder = ?'),
    };
    this.take = db.transaction((name: string, holder: string, ttlMs: number): Lease | null => {
      const now = this.now();
      const row = this.stmts.get.get(name);
      if (row && row.holder !== holder && row.expires_at >= now) return null;
      const token = !row ? 1 : row.holder === holder ? row.token : row.token + 1;
      this.stmts.put.run(name, holder, token, now + ttlMs);
      return { holder, token, expiresAt: now + ttlMs };
    });
  }

  async acquire(name: string, holder: string, ttlMs: number): Promise<Lease | null> {
    return this.take.immediate(name, holder, ttlMs);
  }

  async release(name: string, holder: string): Promise<void> {
    this.stmts.release.run(name, holder);
  }

  async read(name: string): Promise<Lease | null> {
    const row = this.stmts.get.get(name);
    return row ? { holder: row.holder, token: row.token, expiresAt: row.expires_at } : null;
  }
}
