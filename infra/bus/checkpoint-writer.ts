import type { CheckpointStore } from '../../ports/read-store.js';

/**
 * Stores a consumer's position at most every `everyEvents` events or `idleMs` after the last one,
 * and on flush(): one durable write per event cost more than most handlers. A crash replays at most
 * that window, which at-least-once consumers tolerate by design.
 */
export class CheckpointWriter {
  private pending: number | null = null;
  private sinceFlush = 0;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: CheckpointStore,
    private readonly key: string,
    private readonly everyEvents = 100,
    private readonly idleMs = 50,
  ) {}

  async note(position: number): Promise<void> {
    this.pending = position;
    this.sinceFlush += 1;
    if (this.sinceFlush >= this.everyEvents) return this.flush();
    this.timer ??= setTimeout(() => void this.flush(), this.idleMs);
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const position = this.pending;
    this.pending = null;
    this.sinceFlush = 0;
    if (position === null) return this.writing;
    this.writing = this.writing.then(() => this.store.set(this.key, position));
    return this.writing;
  }
}
