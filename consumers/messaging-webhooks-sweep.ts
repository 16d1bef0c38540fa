import type { Clock } from '../ports/clock.js';
import type { Logger } from '../ports/logger.js';
import type { DeliveryTimers, OverdueDeliveries } from '../ports/messaging-webhooks.js';

/** Deliveries looked at per sweep; the rest wait for the next one. */
export const SWEEP_LIMIT = 500;

export interface SweepPorts {
  clock: Clock;
  logger: Logger;
  overdue: OverdueDeliveries;
  timers: DeliveryTimers;
  /** A pending delivery this late is taken over (WEBHOOK_RECOVERY_GRACE_MS). */
  graceMs: number;
  /** The process is shutting down: arm nothing more. */
  closed: () => boolean;
}

/**
 * Re-arms the deliveries nobody holds any more: their worker crashed, or this process restarted
 * after its bus checkpoint had passed them. Resolves with how many it armed in this process.
 */
export async function sweepOverdueDeliveries(ports: SweepPorts): Promise<number> {
  const dueBefore = new Date(ports.clock.now().getTime() - ports.graceMs);
  const due = await ports.overdue.overdue(dueBefore, SWEEP_LIMIT);
  let armed = 0;
  for (const doc of due) {
    if (ports.closed() || ports.timers.holds(doc._id)) continue;
    ports.timers.schedule(doc._id, 0);
    armed++;
  }
  if (armed > 0) ports.logger.info({ armed }, 'webhook sweep re-armed overdue deliveries');
  return armed;
}
