/**
 * The ports of the messaging webhooks context: how a delivery attempt reaches the receiver (a
 * signed HTTP sender), where the next attempts wait (a per-process timer wheel), where the sweep
 * learns what is overdue, and what the context keeps per process (Services.webhooks).
 */

/** One signed POST of a delivery's body (Standard Webhooks headers over id, timestamp and body). */
export interface SignedRequest {
  url: string;
  /** The webhook's secret as stored (sealed); the sender opens it to sign. */
  secretSealed: string;
  /** The `webhook-id` header: the same on every attempt of the delivery. */
  messageId: string;
  body: string;
  sentAt: Date;
  /** Aborted at shutdown: the sender answers `aborted` and the attempt records nothing. */
  signal: AbortSignal;
}

export type SendOutcome =
  | { kind: 'answered'; statusCode: number; retryAfter: string | undefined; durationMs: number }
  /** No answer: OUTBOUND_TIMEOUT, OUTBOUND_NETWORK_ERROR, OUTBOUND_ADDRESS_REFUSED, … */
  | { kind: 'failed'; errorCode: string; durationMs: number }
  | { kind: 'aborted' };

export interface WebhookSender {
  send(request: SignedRequest): Promise<SendOutcome>;
  /**
   * Whether outbound HTTP refuses this URL whatever it resolves to (a literal private or loopback
   * address, localhost), so a configuration can be refused when it is made; false when private
   * networks are allowed.
   */
  refusesOutright(url: string): boolean;
}

/** The per-process timer wheel of attempts; it holds no truth (every attempt re-reads its stream). */
export interface DeliveryTimers {
  /** Arms a delivery's next attempt (at once when past); an earlier arming already in place wins. */
  schedule(deliveryId: string, dueAt: Date | number): void;
  /** Whether this process already holds the delivery (armed, queued or in flight). */
  holds(deliveryId: string): boolean;
}

/** Pending deliveries due at `dueBefore` or earlier, most overdue first (a read model, or the log itself). */
export interface OverdueDeliveries {
  overdue(dueBefore: Date, limit: number): Promise<Array<{ _id: string; nextAttemptAt: string | null }>>;
}

/** What the webhooks context keeps per process: the timers of attempts and, in a worker, the recovery sweep. Closed with the services. */
export interface MessagingWebhooks {
  /** Arms a delivery's next attempt in this process (idempotent; an earlier arming wins). */
  schedule(deliveryId: string, dueAt: Date): void;
  /** Starts the sweep: once now, then every WEBHOOK_SWEEP_INTERVAL_MS. Worker role only; idempotent. */
  startWorker(): void;
  /** One sweep now; resolves with the number of deliveries it armed. */
  sweep(): Promise<number>;
  stats(): { armed: number; queued: number; inFlight: number };
  /** The sender's refusal of a URL outright (see WebhookSender.refusesOutright). */
  refusesOutright(url: string): boolean;
  close(): Promise<void>;
}
