/**
 * Who may run the Kafka relay. Every worker asks; exactly one holds the lease at a time, renews it
 * well before it expires, and anyone else takes it over once it expired. The token grows by one on
 * every takeover, so log lines and status say which tenure published what.
 *
 * Expiry times are wall-clock milliseconds of the process that wrote them: the hosts' clocks must
 * agree to well within the lease's guard (a fifth of its length), which NTP gives.
 */
export interface Lease {
  holder: string;
  token: number;
  /** Epoch ms after which anyone may take the lease over. */
  expiresAt: number;
}

export interface LeaseStore {
  /**
   * Renews the lease when `holder` has it (same token), takes it when it is free or expired (token
   * + 1), and answers null when another holder's lease is still running.
   */
  acquire(name: string, holder: string, ttlMs: number): Promise<Lease | null>;
  /** Lets the next taker in at once (graceful stop); a no-op when `holder` no longer has it. */
  release(name: string, holder: string): Promise<void>;
  read(name: string): Promise<Lease | null>;
}
