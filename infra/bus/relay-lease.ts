import type { Lease, LeaseStore } from '../../ports/lease.js';
import { DuplicateKeyError, type DocumentCollection } from '../../ports/read-store.js';

type LeaseDoc = { _id: string; holder: string; token: number; expiresAt: number };

/**
 * Lease in a document collection (`_leases` on MongoDB/FerretDB): single-document updates are
 * atomic, so "update where expired, else insert" lets exactly one of several takers win; the
 * losers' upsert hits the `_id` that exists (DuplicateKeyError) or matches nothing.
 */
export class DocumentLeaseStore implements LeaseStore {
  constructor(
    private readonly leases: DocumentCollection<LeaseDoc>,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<Lease | null> {
    const now = this.now();
    const expiresAt = now + ttlMs;
    const renewed = await this.leases.updateOne({ _id: name, holder }, { $set: { expiresAt } });
    if (renewed.matched === 0) {
      try {
        await this.leases.updateOne({ _id: name, expiresAt: { $lt: now } }, { $set: { holder, expiresAt }, $inc: { token: 1 } }, { upsert: true });
      } catch (err) {
        if (err instanceof DuplicateKeyError) return null;
        throw err;
      }
    }
    const lease = await this.read(name);
    return lease && lease.holder === holder ? lease : null;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.leases.updateOne({ _id: name, holder }, { $set: { expiresAt: 0 } });
  }

  async read(name: string): Promise<Lease | null> {
    const doc = await this.leases.findOne({ _id: name });
    return doc ? { holder: doc.holder, token: doc.token, expiresAt: doc.expiresAt } : null;
  }
}
