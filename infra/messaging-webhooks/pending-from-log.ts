import { DELIVERY_CATEGORY } from '../../domain/messaging-webhooks/index.js';
import type { EventStore } from '../../ports/event-store.js';

/** Events read per page while catching up with the log. */
const PAGE = 1_000;

/**
 * The pending deliveries and their next attempt times, folded from the `msgdelivery` events of the
 * log itself. The sweep uses it where the delivery read model is not kept in this process: a worker
 * on the in-memory read store (it does not project; the read model lives in whichever process does).
 * The first sweep reads every delivery event once; each later one reads only what was appended
 * since. Memory: one entry per pending delivery (settled ones are dropped).
 */
export class PendingDeliveriesFromLog {
  private position = 0;
  private readonly pending = new Map<string, string>();

  constructor(private readonly events: EventStore) {}

  /** Catches up with the log; resolves with the number of events folded. */
  async refresh(): Promise<number> {
    let folded = 0;
    for (;;) {
      const page = await this.events.readAll({ after: this.position, maxCount: PAGE, categories: [DELIVERY_CATEGORY] });
      for (const event of page) {
        this.apply(event.streamId.slice(DELIVERY_CATEGORY.length + 1), event.type, event.data as Record<string, unknown>);
        this.position = event.position;
      }
      folded += page.length;
      if (page.length < PAGE) return folded;
    }
  }

  private apply(deliveryId: string, type: string, data: Record<string, unknown>): void {
    switch (type) {
      case 'WebhookDeliveryScheduled':
        this.pending.set(deliveryId, String(data.nextAttemptAt));
        break;
      case 'WebhookDeliveryAttempted':
        if (data.outcome === 'retry' && typeof data.nextAttemptAt === 'string') this.pending.set(deliveryId, data.nextAttemptAt);
        else this.pending.delete(deliveryId);
        break;
      case 'WebhookDeliveryCancelled':
        this.pending.delete(deliveryId);
        break;
      case 'WebhookRedeliveryRequested':
        this.pending.set(deliveryId, String(data.at));
        break;
      default:
        break;
    }
  }

  /** Same contract as the read model's `overdueDeliveries`: due at `dueBefore` or earlier, most overdue first. */
  overdue(dueBefore: Date, limit: number): Array<{ _id: string; nextAttemptAt: string }> {
    const cutoff = dueBefore.toISOString();
    return [...this.pending]
      .filter(([, at]) => at <= cutoff)
      .sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .slice(0, limit)
      .map(([_id, nextAttemptAt]) => ({ _id, nextAttemptAt }));
  }

  size(): number {
    return this.pending.size;
  }
}
