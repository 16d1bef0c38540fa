import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { ProjectionControl } from '../commands/operations-control.js';
import { categoryOf } from '../domain/shared/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { backoffDelay } from '../lib/backoff.js';
import { sleep } from '../lib/sleep.js';
import { type Projector, projectAll } from '../projections/projector.js';
import { systemClock } from '../ports/clock.js';
import type { EventStore, EventSubscription } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { Projections, ProjectionStatus, RebuildResult } from '../ports/projections.js';
import type { ReadStore } from '../ports/read-store.js';

const LAG_CAP = 10_000;
/** The most events projected together (one `projectBatch`, one checkpoint). */
export const PROJECTION_BATCH_MAX = 1_000;
const checkpointKey = (name: string) => `projection:${name}`;
/** A failed projection starts again after a capped, jittered backoff (issue 37: a read store that went away comes back). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;
/**
 * A batch still unfinished after this long is abandoned and the projection starts again from its
 * checkpoint. The faulted soak (issue 37) left projections `running` and still for good after the
 * read store restarted; whatever the await that never settles, the read model must not stand still.
 * Far above a healthy batch (1,000 events, bulk writes of 64, socket timeout 60 s).
 */
export const PROJECTION_STALL_MS = 120_000;

interface Loop {
  projector: Projector;
  position: number;
  state: ProjectionStatus['state'];
  lastError: string | null;
  subscription: EventSubscription | null;
  done: Promise<void> | null;
  projected: number;
  /** Consecutive failures; 0 once a batch is projected again. */
  failures: number;
  retry: NodeJS.Timeout | null;
  /** When the batch in flight began (ms since epoch); null between batches. */
  batchStartedAt: number | null;
  /** Bumped when an attempt is abandoned: a late-settling old attempt then changes nothing. */
  attempt: number;
  /** Read-your-writes waits in this process on this loop: while any, a batch never coalesces. */
  waiters: number;
  /** Ends a coalescing wait (a reader came, or the loop stops); null when none is running. */
  flush: (() => void) | null;
}

export interface ProjectionRunnerOptions {
  stopTimeoutMs?: number;
  /** See PROJECTION_STALL_MS. */
  stallMs?: number;
}

/**
 * Runs projectors in this process (`local`), or only knows about them (`remote`: the API role of a
 * split deployment), in which case positions are read from the shared checkpoint store.
 */
export class ProjectionRunner implements Projections {
  private readonly loops = new Map<string, Loop>();
  private readonly progress = new EventEmitter();
  private control: ProjectionControl | null = null;
  private stopping = false;
  private stallCheck: NodeJS.Timeout | null = null;
  private readonly stopTimeoutMs: number;
  private readonly stallMs: number;

  constructor(
    private readonly events: EventStore,
    private readonly store: ReadStore,
    projectors: Projector[],
    private readonly logger: Logger,
    readonly mode: 'local' | 'remote' = 'local',
    options: ProjectionRunnerOptions = {},
  ) {
    this.stopTimeoutMs = options.stopTimeoutMs ?? 5_000;
    this.stallMs = options.stallMs ?? PROJECTION_STALL_MS;
    this.progress.setMaxListeners(0);
    for (const projector of projectors) {
      this.loops.set(projector.name, { projector, position: 0, state: 'stopped', lastError: null, subscription: null, done: null, projected: 0, failures: 0, retry: null, batchStartedAt: null, attempt: 0, waiters: 0, flush: null });
    }
  }

  names(): string[] {
    return [...this.loops.keys()];
  }

  has(name: string): boolean {
    return this.loops.has(name);
  }

  async start(): Promise<void> {
    if (this.mode === 'remote') {
      for (const loop of this.loops.values()) loop.state = 'remote';
      return;
    }
    await Promise.all([...this.loops.values()].map((loop) => this.startLoop(loop)));
    this.stallCheck = setInterval(() => this.abandonStalled(), Math.max(10, Math.min(10_000, this.stallMs / 4)));
    this.stallCheck.unref();
    this.control = new ProjectionControl({ events: this.events, projections: this, logger: this.logger, clock: systemClock, newId: randomUUID });
    await this.control.start();
  }

  private async startLoop(loop: Loop): Promise<void> {
    await loop.projector.setup(this.store);
    loop.position = (await this.store.checkpoints.get(checkpointKey(loop.projector.name))) ?? 0;
    if (loop.position > 0 && loop.position > (await this.events.headPosition())) {
      // Read models kept on disk that are ahead of the log were built from another log (its file
      // replaced, or restored alone): resuming would skip the new log's events up to there.
      this.logger.warn({ projection: loop.projector.name, checkpoint: loop.position }, 'projection checkpoint is past the log head: rebuilding');
      for (const collection of loop.projector.collections) await this.store.collection(collection).drop();
      await this.store.checkpoints.delete(checkpointKey(loop.projector.name));
      await loop.projector.setup(this.store);
      loop.position = 0;
    }
    loop.state = 'running';
    loop.lastError = null;
    const subscription = this.events.subscribe({ after: loop.position, categories: loop.projector.categories });
    loop.subscription = subscription;
    loop.batchStartedAt = null;
    loop.done = this.project(loop, subscription, loop.attempt);
  }

  /** Abandons every attempt whose batch has run longer than stallMs (see PROJECTION_STALL_MS). */
  private abandonStalled(): void {
    const now = Date.now();
    for (const loop of this.loops.values()) {
      if (loop.state !== 'running' || loop.batchStartedAt === null || now - loop.batchStartedAt < this.stallMs) continue;
      const stalledMs = now - loop.batchStartedAt;
      loop.attempt += 1;
      loop.batchStartedAt = null;
      this.failed(loop, new Error(`a batch did not finish in ${Math.round(stalledMs / 1000)} s (stalled); starting again from the checkpoint`));
    }
  }

  /**
   * Reads the subscription ahead into a buffer (at most PROJECTION_BATCH_MAX events) while the
   * projector works, and projects what the buffer holds as one batch: a batch is what arrived
   * meanwhile, never waited for. One checkpoint per batch, after it: a failure or a crash
   * mid-batch projects the whole batch again from the last checkpoint (projectors are idempotent).
   */
  private async project(loop: Loop, subscription: EventSubscription, attempt: number): Promise<void> {
    const current = () => loop.attempt === attempt;
    const buffer: RecordedEvent[] = [];
    let ended = false;
    let readError: unknown = null;
    // Held in an object: closures assign them, which narrowing of plain `let`s does not see.
    const wake: { projector: (() => void) | null; reader: (() => void) | null } = { projector: null, reader: null };
    let quit = false;
    const iterator = subscription[Symbol.asyncIterator]();
    const reader = (async () => {
      try {
        while (!quit) {
          if (buffer.length >= PROJECTION_BATCH_MAX) {
            await new Promise<void>((resolve) => (wake.reader = resolve));
            continue;
          }
          const next = await iterator.next();
          if (next.done) break;
          buffer.push(next.value);
          wake.projector?.();
          if (buffer.length >= PROJECTION_BATCH_MAX) loop.flush?.();
        }
      } catch (err) {
        readError = err;
      } finally {
        ended = true;
        wake.projector?.();
        loop.flush?.();
      }
    })();
    try {
      for (;;) {
        // Ended: closed (stop, rebuild) or failed; what was read ahead is left to the next start.
        if (ended) {
          if (readError) throw readError;
          return;
        }
        if (!buffer.length) {
          await new Promise<void>((resolve) => (wake.projector = resolve));
          wake.projector = null;
          // One turn of the event loop lets events the subscription already holds (the rest of
          // the page it read) join this batch; it never waits for new appends.
          await new Promise<void>((resolve) => setImmediate(resolve));
          await this.coalesce(loop, buffer, () => ended);
          continue;
        }
        const batch = buffer.splice(0, PROJECTION_BATCH_MAX);
        wake.reader?.();
        wake.reader = null;
        // Event by event, the read model already shows each event: read-your-writes (waitFor) need
        // not wait for the batch's checkpoint. Not on a store whose batch commits as one
        // transaction (SQLite): a read there sees the batch's rows before the commit, and a failure
        // would roll back rows a waiter was told it can read; its position moves at the commit.
        // Counted with the position, event by event: a rebuild that sees the position reach its
        // target before the batch's checkpoint is written must count those events too.
        const eventByEvent = !this.store.atomically;
        let counted = 0;
        const last = batch[batch.length - 1].position;
        loop.batchStartedAt = Date.now();
        // Where the store can, the batch's writes and its checkpoint commit together: a crash
        // mid-batch leaves neither, so nothing is applied twice.
        await this.atomically(async (store) => {
          await projectAll(loop.projector, batch, store, (event) => {
            if (!current() || !eventByEvent) return;
            loop.position = event.position;
            loop.projected += 1;
            counted += 1;
            this.progress.emit('progress');
          });
          // An abandoned attempt that settles late must not move the checkpoint back.
          if (current()) await store.checkpoints.set(checkpointKey(loop.projector.name), last);
        });
        // Abandoned as stalled meanwhile: the new attempt owns the loop.
        if (!current()) return;
        loop.batchStartedAt = null;
        loop.position = last;
        loop.failures = 0;
        // A batch projector tells nothing per event: its batch counts here, with its position.
        loop.projected += batch.length - counted;
        this.progress.emit('progress');
      }
    } catch (err) {
      loop.batchStartedAt = null;
      if (current()) this.failed(loop, err);
    } finally {
      quit = true;
      wake.reader?.();
      loop.flush?.();
      void reader;
    }
  }

  /**
   * Lets a batch grow for up to the projector's coalesceMs while nobody in this process waits to
   * read it: ended early by a read-your-writes wait (waitFor), a full buffer or the loop's end.
   */
  private async coalesce(loop: Loop, buffer: RecordedEvent[], ended: () => boolean): Promise<void> {
    const ms = loop.projector.coalesceMs ?? 0;
    if (ms <= 0 || loop.waiters > 0 || ended() || buffer.length >= PROJECTION_BATCH_MAX || this.stopping) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => loop.flush?.(), ms);
      loop.flush = () => {
        clearTimeout(timer);
        loop.flush = null;
        resolve();
      };
    });
  }

  /**
   * Failed, never skipped: the projection stays at its checkpoint, shows `failed` with the error,
   * and starts again from there after a backoff, forever. A read store that was down (FerretDB or
   * PostgreSQL restarted) thus heals by itself; an event a projector cannot take keeps failing,
   * visibly, until the projector is fixed.
   */
  private failed(loop: Loop, err: unknown): void {
    loop.state = 'failed';
    loop.lastError = (err as Error).message;
    loop.failures += 1;
    const delay = backoffDelay(loop.failures, RETRY_BASE_MS, RETRY_MAX_MS);
    this.logger.error({ err, projection: loop.projector.name, failures: loop.failures, retryInMs: delay }, 'projection failed');
    this.progress.emit('progress');
    clearTimeout(loop.retry ?? undefined);
    loop.retry = setTimeout(() => {
      loop.retry = null;
      if (loop.state === 'failed') void this.restartLoop(loop);
    }, delay);
    loop.retry.unref();
  }

  private async restartLoop(loop: Loop): Promise<void> {
    await loop.subscription?.close().catch(() => undefined);
    loop.subscription = null;
    // Stopped or rebuilt meanwhile: that path owns the loop now.
    if (this.stopping || loop.state !== 'failed') return;
    try {
      await this.startLoop(loop);
    } catch (err) {
      this.failed(loop, err);
    }
  }

  private atomically<T>(fn: (store: ReadStore) => Promise<T>): Promise<T> {
    return this.store.atomically ? this.store.atomically(fn) : fn(this.store);
  }

  private async stopLoop(loop: Loop): Promise<void> {
    clearTimeout(loop.retry ?? undefined);
    loop.retry = null;
    await loop.subscription?.close();
    // A projector stuck in I/O must not hold shutdown hostage; its checkpoint is simply not advanced.
    await Promise.race([loop.done, new Promise((resolve) => setTimeout(resolve, this.stopTimeoutMs).unref())]);
    loop.subscription = null;
    loop.done = null;
    if (loop.state !== 'failed') loop.state = 'stopped';
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.stallCheck) clearInterval(this.stallCheck);
    this.stallCheck = null;
    await this.control?.stop();
    this.control = null;
    await Promise.all([...this.loops.values()].map((loop) => this.stopLoop(loop)));
  }

  private async positionOf(loop: Loop): Promise<number> {
    if (this.mode === 'local') return loop.position;
    return (await this.store.checkpoints.get(checkpointKey(loop.projector.name))) ?? 0;
  }

  /**
   * Read-your-writes: resolves true once every projector reading `streamId`'s category (but those
   * with readYourWrites false) has reached `position`, false when `timeoutMs` passed first (the
   * write still stands).
   */
  async waitFor(position: number, streamId: string, timeoutMs: number): Promise<boolean> {
    const category = categoryOf(streamId);
    const relevant = [...this.loops.values()].filter((l) => l.projector.categories.includes(category) && l.projector.readYourWrites !== false);
    const deadline = Date.now() + timeoutMs;
    // A reader is waiting: no batch of these loops coalesces until it is answered.
    for (const loop of relevant) {
      loop.waiters += 1;
      loop.flush?.();
    }
    try {
      return await this.waitPositions(relevant, position, deadline);
    } finally {
      for (const loop of relevant) loop.waiters -= 1;
    }
  }

  private async waitPositions(relevant: Loop[], position: number, deadline: number): Promise<boolean> {
    for (;;) {
      // Listen before reading positions: progress made between the two must still wake us.
      const remaining = deadline - Date.now();
      const progressed = this.nextProgress(Math.max(0, Math.min(remaining, this.mode === 'local' ? remaining : 10)));
      const positions = await Promise.all(relevant.map((l) => this.positionOf(l)));
      if (positions.every((p) => p >= position)) {
        progressed.cancel();
        return true;
      }
      if (remaining <= 0) {
        progressed.cancel();
        return false;
      }
      await progressed;
    }
  }

  private nextProgress(ms: number): Promise<void> & { cancel(): void } {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => {
      done = () => {
        clearTimeout(timer);
        this.progress.off('progress', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.progress.on('progress', done);
    });
    return Object.assign(promise, { cancel: done });
  }

  async status(): Promise<ProjectionStatus[]> {
    const head = await this.events.headPosition();
    return Promise.all(
      [...this.loops.values()].map(async (loop) => {
        const position = await this.positionOf(loop);
        const pending = await this.events.readAll({ after: position, categories: loop.projector.categories, maxCount: LAG_CAP });
        return {
          name: loop.projector.name,
          categories: loop.projector.categories,
          state: loop.state,
          position,
          head,
          lag: pending.length,
          lastError: loop.lastError,
          busyMs: this.mode === 'local' && loop.batchStartedAt !== null ? Date.now() - loop.batchStartedAt : null,
        };
      }),
    );
  }

  /** Drops the projector's collections and checkpoint and projects its categories again from the start. */
  async rebuild(name: string): Promise<RebuildResult> {
    const loop = this.loops.get(name);
    if (!loop) throw new Error(`unknown projection ${name}`);
    if (this.mode === 'remote') throw new Error('rebuild runs where the projectors run');
    const started = performance.now();
    await this.stopLoop(loop);
    loop.state = 'rebuilding';
    for (const collection of loop.projector.collections) await this.store.collection(collection).drop();
    await this.store.checkpoints.delete(checkpointKey(name));
    const target = await this.events.headPosition();
    loop.projected = 0;
    await this.startLoop(loop);
    await this.caughtUp(loop, target);
    this.logger.info({ projection: name, events: loop.projected }, 'projection rebuilt');
    return { name, events: loop.projected, durationMs: Math.round(performance.now() - started) };
  }

  /** Until the loop has projected every event of its categories up to `target`. */
  private async caughtUp(loop: Loop, target: number): Promise<void> {
    for (;;) {
      if (loop.state !== 'running') throw new Error(loop.lastError ?? `projection ${loop.projector.name} stopped`);
      const [next] = await this.events.readAll({ after: loop.position, categories: loop.projector.categories, maxCount: 1 });
      if (!next || next.position > target) return;
      // Not on every projected event: each check is a read of the log.
      await sleep(20);
    }
  }
}
