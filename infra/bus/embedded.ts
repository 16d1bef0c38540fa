import type { Bus, Consumer, RunningConsumer } from '../../ports/bus.js';
import type { DeadLetterSink } from '../../ports/dead-letters.js';
import type { EventStore, EventSubscription } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';
import type { CheckpointStore } from '../../ports/read-store.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { backoffDelay } from '../../lib/backoff.js';
import { sleep } from '../../lib/sleep.js';
import { handleWithRetry, retryPolicy, type RetryPolicy } from './retry-handler.js';

export interface EmbeddedBusOptions {
  /** Handler retries before an event is dead-lettered (see retry-handler.ts). */
  retry?: Partial<RetryPolicy>;
  /** Backoff when the subscription itself fails (store closed, disk error). */
  resubscribeBaseMs?: number;
  resubscribeMaxMs?: number;
  /** Where dead letters are recorded; `detail()` adds their count to health. */
  deadLetters?: DeadLetterSink & { detail?(): string };
}

export const checkpointKey = (consumerName: string) => `consumer:${consumerName}`;

/**
 * Bus over the event store's own ordered log: each consumer subscribes after its durable
 * checkpoint, filtered to its categories. The checkpoint is stored after the handler resolved
 * (at least once: a crash between the two redelivers one event). Per-stream order holds because
 * the log is totally ordered and events are handled one at a time.
 */
export class EmbeddedBus implements Bus {
  readonly adapter = 'embedded';
  private readonly running = new Set<RunningConsumer>();
  private readonly policy: RetryPolicy;

  constructor(
    private readonly eventStore: EventStore,
    private readonly checkpoints: CheckpointStore,
    private readonly logger: Logger,
    private readonly options: EmbeddedBusOptions = {},
  ) {
    this.policy = retryPolicy(options.retry);
  }

  async start(consumer: Consumer): Promise<RunningConsumer> {
    // An empty list would mean "every category" to the event store; the Kafka bus cannot offer that.
    if (consumer.categories.length === 0) throw new Error(`consumer ${consumer.name}: no categories to consume`);
    const key = checkpointKey(consumer.name);
    const log = this.logger.child({ bus: 'embedded', consumer: consumer.name });
    const abort = new AbortController();
    let subscription: EventSubscription | null = null;
    // Read once before returning so a broken checkpoint store fails start() loudly.
    let after = (await this.checkpoints.get(key)) ?? 0;
    const checkpoint = new CheckpointWriter(this.checkpoints, key);

    const loop = async () => {
      let failures = 0;
      while (!abort.signal.aborted) {
        try {
          subscription = this.eventStore.subscribe({ after, categories: consumer.categories });
          for await (const event of subscription) {
            const outcome = await handleWithRetry(consumer, event, this.policy, log, abort.signal, this.options.deadLetters);
            if (outcome === 'aborted') break;
            await checkpoint.note(event.position);
            after = event.position;
            failures = 0;
          }
          if (!abort.signal.aborted) throw new Error('event store subscription ended unexpectedly');
        } catch (err) {
          // Resubscribe from the last stored position rather than dying silently.
          failures++;
          const delay = backoffDelay(failures, this.options.resubscribeBaseMs ?? 200, this.options.resubscribeMaxMs ?? 30_000);
          log.error({ error: (err as Error).message, attempt: failures, retryInMs: delay }, 'subscription failed; resubscribing');
          await subscription?.close().catch(() => undefined);
          await sleep(delay, abort.signal);
        }
      }
    };
    const done = loop();

    const running: RunningConsumer = {
      name: consumer.name,
      stop: async () => {
        if (!this.running.delete(running)) return done;
        // Cuts retry backoffs short; a handler already running is awaited, not interrupted.
        abort.abort();
        await subscription?.close();
        await done;
        await checkpoint.flush();
        log.debug({ position: after }, 'consumer stopped');
      },
    };
    this.running.add(running);
    log.debug({ after, categories: consumer.categories }, 'consumer started');
    return running;
  }

  async health() {
    const health = await this.eventStore.health();
    const letters = this.options.deadLetters?.detail?.() ?? '';
    return letters ? { ...health, detail: `${health.detail ?? 'event log'}${letters}` } : health;
  }

  async close(): Promise<void> {
    await Promise.all([...this.running].map((r) => r.stop()));
  }
}
