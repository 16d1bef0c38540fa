/**
 * Who may run the Kafka relay. Every worker asks; exactly one holds the lease at a time, renews it
 * well before it expires, and anyone else takes it over once it expired. The token grows by one on
 * every takeover, so log lines and status say which tenure published what.
 *
 * Expiry times are wall-clock milliseconds of the process that wrote them. Clocks that disagree
 * cannot make two relays publish (the leader reads the token back before every batch, see
 * relay-leader.ts); they move failover: a host whose clock is ahead takes the lease early, and
 * after the death of a leader whose clock was ahead the others wait out the difference.
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
