import type { RecordedEvent } from '../../domain/shared/events.js';

/**
 * The events this process appended most recently, in memory, so that live subscriptions (every
 * projector and consumer wakes on every append) read them without a query each. It answers only
 * when it can prove it holds every event after the position asked for: its positions must be
 * contiguous up to the log's head. Another process writing to the same file breaks that, and the
 * caller falls back to SQL.
 */
export class RecentEvents {
  private events: RecordedEvent[] = [];
  /** Category of each event, computed once at push. */
  private categories: string[] = [];
  /** Events the store deleted since (a summing-up append truncated their stream): their positions stay, unread. */
  private forgotten: boolean[] = [];

  constructor(private readonly capacity = 10_000) {}

  push(batch: RecordedEvent[]): void {
    for (const event of batch) deepFreeze(event);
    const last = this.events[this.events.length - 1];
    // A gap means another writer: what we hold no longer proves anything before it.
    if (last && batch[0] && batch[0].position !== last.position + 1) {
      this.events = [];
      this.categories = [];
      this.forgotten = [];
    }
    for (const event of batch) {
      this.events.push(event);
      this.categories.push(categoryOfStream(event.streamId));
      this.forgotten.push(false);
    }
    if (this.events.length > this.capacity) {
      const keep = Math.floor(this.capacity / 2);
      this.events = this.events.slice(-keep);
      this.categories = this.categories.slice(-keep);
      this.forgotten = this.forgotten.slice(-keep);
    }
  }

  /** Events after `after`, or null when the answer needs the database. */
  read(after: number, head: number, max: number, categories: string[] | undefined): RecordedEvent[] | null {
    const events = this.events;
    if (events.length === 0) return null;
    const first = events[0].position;
    const last = events[events.length - 1].position;
    if (last !== head || after < first - 1 || after > last) return null;
    const out: RecordedEvent[] = [];
    for (let i = after - first + 1; i < events.length && out.length < max; i++) {
      if (this.forgotten[i]) continue;
      if (!categories || categories.length === 0 || categories.includes(this.categories[i])) out.push(events[i]);
    }
    return out;
  }

  /** The events of `streamId` before `beforeRevision` were deleted: reads skip them from now on. */
  forget(streamId: string, beforeRevision: number): void {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i];
      if (e.streamId === streamId && e.revision < beforeRevision) this.forgotten[i] = true;
    }
  }
}

function categoryOfStream(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
}

/** Shared between subscribers, so nobody may change them. */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
