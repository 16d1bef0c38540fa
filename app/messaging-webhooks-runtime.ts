import { attemptDelivery } from '../consumers/messaging-webhooks-attempt.js';
import { sweepOverdueDeliveries } from '../consumers/messaging-webhooks-sweep.js';
import type { RetryPolicy } from '../domain/messaging-webhooks/index.js';
import { overdueDeliveries } from '../projections/messaging-webhooks.js';
import type { SealedBox } from '../infra/auth/sealed-box.js';
import type { Config } from '../infra/config/index.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { MessagingWebhooks, OverdueDeliveries } from '../ports/messaging-webhooks.js';
import type { OutboundHttp } from '../ports/outbound-http.js';
import type { ReadStore } from '../ports/read-store.js';
import { PendingDeliveriesFromLog } from '../infra/messaging-webhooks/pending-from-log.js';
import { DeliveryScheduler } from '../infra/messaging-webhooks/scheduler.js';
import { webhookSender } from '../infra/messaging-webhooks/sender.js';

type WebhooksConfig = Pick<
  Config,
  | 'WEBHOOK_MAX_ATTEMPTS' | 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_RETRY_FACTOR' | 'WEBHOOK_RETRY_MAX_MS' | 'WEBHOOK_RETRY_JITTER' | 'WEBHOOK_RETRY_AFTER_MAX_MS'
  | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_FAILURE_THRESHOLD' | 'WEBHOOK_CONCURRENCY' | 'WEBHOOK_SWEEP_INTERVAL_MS' | 'WEBHOOK_RECOVERY_GRACE_MS'
  | 'ALLOW_PRIVATE_NETWORK' | 'MONGODB_URL'
>;

export interface WebhooksRuntimeOptions {
  config: WebhooksConfig;
  logger: Logger;
  clock: Clock;
  eventStore: EventStore;
  readStore: ReadStore;
  sealedBox: Pick<SealedBox, 'open'>;
  /** Whether this process projects the read models itself (ProjectionRunner mode `local`). */
  projectsLocally: boolean;
  /** The container's outbound HTTP (its keep-alive pool); the process-wide default when absent. */
  outbound?: OutboundHttp;
}

export function retryPolicyOf(config: WebhooksConfig): RetryPolicy {
  return {
    maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
    baseMs: config.WEBHOOK_RETRY_BASE_MS,
    factor: config.WEBHOOK_RETRY_FACTOR,
    maxMs: config.WEBHOOK_RETRY_MAX_MS,
    jitter: config.WEBHOOK_RETRY_JITTER,
    retryAfterMaxMs: config.WEBHOOK_RETRY_AFTER_MAX_MS,
  };
}

/**
 * Where the sweep learns what is pending: the delivery read model when this process can read a
 * projected one (it projects, or the read store is MongoDB, projected by the projector role);
 * otherwise (a worker on the in-memory read store, which nobody projects here) the event log.
 */
function overdueSource(options: WebhooksRuntimeOptions): OverdueDeliveries {
  if (options.projectsLocally || options.config.MONGODB_URL) {
    return { overdue: (dueBefore, limit) => overdueDeliveries(options.readStore, dueBefore, limit) };
  }
  let fromLog: PendingDeliveriesFromLog | null = null;
  return {
    async overdue(dueBefore, limit) {
      fromLog ??= new PendingDeliveriesFromLog(options.eventStore);
      await fromLog.refresh();
      return fromLog.overdue(dueBefore, limit);
    },
  };
}

/**
 * The webhooks context of one process: the timer wheel whose timers run the attempt consumer, and
 * in a worker the interval that runs the recovery sweep. Built from the ports it uses, so it exists
 * before the Services object does.
 */
export function createWebhooksRuntime(options: WebhooksRuntimeOptions): MessagingWebhooks {
  const { config, clock } = options;
  const logger = options.logger.child({ component: 'webhooks' });
  const sender = webhookSender({ sealedBox: options.sealedBox, timeoutMs: config.WEBHOOK_TIMEOUT_MS, allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK, http: options.outbound });
  const overdue = overdueSource(options);
  let scheduler: DeliveryScheduler | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping: Promise<number> | null = null;
  let closed = false;

  const wheel = (): DeliveryScheduler => {
    if (!scheduler) {
      const ports = { eventStore: options.eventStore, clock, sender, logger: options.logger, policy: retryPolicyOf(config), failureThreshold: config.WEBHOOK_FAILURE_THRESHOLD, random: Math.random };
      scheduler = new DeliveryScheduler(
        (deliveryId, signal) => attemptDelivery(ports, deliveryId, signal, (id, dueAt) => scheduler?.schedule(id, dueAt)),
        config.WEBHOOK_CONCURRENCY,
        (deliveryId, err) => {
          // Recording failed (store down): the delivery stays pending and due, and the sweep re-arms it.
          logger.error({ deliveryId, error: (err as Error).message }, 'webhook attempt could not be completed');
        },
      );
    }
    return scheduler;
  };

  const sweep = () =>
    sweepOverdueDeliveries({
      clock,
      logger: options.logger,
      overdue,
      timers: { schedule: (id, dueAt) => wheel().schedule(id, dueAt), holds: (id) => wheel().holds(id) },
      graceMs: config.WEBHOOK_RECOVERY_GRACE_MS,
      closed: () => closed,
    });

  return {
    schedule(deliveryId, dueAt) {
      if (!closed) wheel().schedule(deliveryId, dueAt);
    },
    startWorker() {
      if (closed || sweepTimer) return;
      const tick = () => {
        if (closed || sweeping) return;
        sweeping = sweep()
          .catch((err) => {
            options.logger.warn({ error: (err as Error).message }, 'webhook sweep failed; trying again at the next interval');
            return 0;
          })
          .finally(() => (sweeping = null));
      };
      sweepTimer = setInterval(tick, config.WEBHOOK_SWEEP_INTERVAL_MS);
      sweepTimer.unref();
      tick();
    },
    sweep,
    stats: () => scheduler?.stats() ?? { armed: 0, queued: 0, inFlight: 0 },
    refusesOutright: (url) => sender.refusesOutright(url),
    async close() {
      closed = true;
      if (sweepTimer) clearInterval(sweepTimer);
      await sweeping?.catch(() => undefined);
      await scheduler?.close();
    },
  };
}
