import type Database from 'better-sqlite3';
import type { CheckpointStore } from '../../ports/read-store.js';

/** Durable checkpoints in the embedded event store's file (table created by SqliteEventStore). */
export class SqliteCheckpointStore implements CheckpointStore {
  private readonly stmts;

  constructor(db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    this.stmts = {
      get: db.prepare<[string], { position: number }>('SELECT position FROM checkpoints WHERE name = ?'),
      set: db.prepare('INSERT INTO checkpoints (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position'),
      del: db.prepare('DELETE FROM checkpoints WHERE name = ?'),
      list: db.prepare<[], { name: string; position: number }>('SELECT name, position FROM checkpoints ORDER BY name'),
    };
  }

  async get(name: string) {
    return this.stmts.get.get(name)?.position ?? null;
  }
  async set(name: string, position: number) {
    this.stmts.set.run(name, position);
  }
  async delete(name: string) {
    this.stmts.del.run(name);
  }
  async list() {
    return this.stmts.list.all();
  }
}
