import { overdueDeliveries } from '../../projections/messaging-webhooks.js';
import type { Services } from '../ports/services.js';
import { attemptDelivery } from './deliverer.js';
import { PendingDeliveriesFromLog } from './pending-from-log.js';
import { DeliveryScheduler } from './scheduler.js';

/** Deliveries looked at per sweep; the rest wait for the next one. */
const SWEEP_LIMIT = 500;

/**
 * What the webhooks context keeps per process: the timer wheel of attempts, and in a worker the
 * sweep that re-arms deliveries nobody holds any more (their worker crashed, or this process
 * restarted after its bus checkpoint had passed them). Closed with the services.
 */
export interface WebhooksRuntime {
  /** Arms a delivery's next attempt in this process (idempotent; an earlier arming wins). */
  schedule(deliveryId: string, dueAt: Date): void;
  /** Starts the sweep: once now, then every WEBHOOK_SWEEP_INTERVAL_MS. Worker role only; idempotent. */
  startWorker(): void;
  /** One sweep now; resolves with the number of deliveries it armed. */
  sweep(): Promise<number>;
  stats(): { armed: number; queued: number; inFlight: number };
  close(): Promise<void>;
}

export function createWebhooksRuntime(getServices: () => Services): WebhooksRuntime {
  let scheduler: DeliveryScheduler | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping: Promise<number> | null = null;
  let closed = false;
  let fromLog: PendingDeliveriesFromLog | null = null;

  /**
   * Where the sweep learns what is pending: the delivery read model when this process can read a
   * projected one (it projects, or the read store is MongoDB, projected by the projector role);
   * otherwise (a worker on the in-memory read store, which nobody projects here) the event log.
   */
  async function overdue(services: Services, dueBefore: Date) {
    if (services.projections.mode === 'local' || services.config.MONGODB_URL) return overdueDeliveries(services.readStore, dueBefore, SWEEP_LIMIT);
    fromLog ??= new PendingDeliveriesFromLog(services.eventStore);
    await fromLog.refresh();
    return fromLog.overdue(dueBefore, SWEEP_LIMIT);
  }

  const wheel = (): DeliveryScheduler => {
    if (!scheduler) {
      const services = getServices();
      const log = services.logger.child({ component: 'webhooks' });
      scheduler = new DeliveryScheduler(
        (deliveryId, signal) => attemptDelivery(services, deliveryId, signal, (id, dueAt) => scheduler?.schedule(id, dueAt)),
        services.config.WEBHOOK_CONCURRENCY,
        (deliveryId, err) => {
          // Recording failed (store down): the delivery stays pending and due, and the sweep re-arms it.
          log.error({ deliveryId, error: (err as Error).message }, 'webhook attempt could not be completed');
        },
      );
    }
    return scheduler;
  };

  async function sweepOnce(): Promise<number> {
    const services = getServices();
    const dueBefore = new Date(services.now().getTime() - services.config.WEBHOOK_RECOVERY_GRACE_MS);
    const due = await overdue(services, dueBefore);
    let armed = 0;
    for (const doc of due) {
      if (closed || wheel().holds(doc._id)) continue;
      wheel().schedule(doc._id, 0);
      armed++;
    }
    if (armed > 0) services.logger.info({ armed }, 'webhook sweep re-armed overdue deliveries');
    return armed;
  }

  const runtime: WebhooksRuntime = {
    schedule(deliveryId, dueAt) {
      if (!closed) wheel().schedule(deliveryId, dueAt);
    },
    startWorker() {
      if (closed || sweepTimer) return;
      const services = getServices();
      const tick = () => {
        if (closed || sweeping) return;
        sweeping = sweepOnce()
          .catch((err) => {
            services.logger.warn({ error: (err as Error).message }, 'webhook sweep failed; trying again at the next interval');
            return 0;
          })
          .finally(() => (sweeping = null));
      };
      sweepTimer = setInterval(tick, services.config.WEBHOOK_SWEEP_INTERVAL_MS);
      sweepTimer.unref();
      tick();
    },
    sweep: () => sweepOnce(),
    stats: () => scheduler?.stats() ?? { armed: 0, queued: 0, inFlight: 0 },
    async close() {
      closed = true;
      if (sweepTimer) clearInterval(sweepTimer);
      await sweeping?.catch(() => undefined);
      await scheduler?.close();
    },
  };
  return runtime;
}
