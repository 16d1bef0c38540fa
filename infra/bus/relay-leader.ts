import type { LeaseStore } from '../../ports/lease.js';
import type { Logger } from '../../ports/logger.js';
import { sleep } from '../../lib/sleep.js';

export interface RelayLeaderOptions {
  leases: LeaseStore;
  /** Unique per process: `<role>:<pid>:<random>`. */
  holder: string;
  /** A dead leader's successor publishes within this long of its death (RELAY_FAILOVER_MS). */
  failoverMs: number;
  logger: Logger;
  leaseName?: string;
  /** Monotonic milliseconds (tests pass their own): a jump of the wall clock must not extend a tenure. */
  monotonicNow?: () => number;
}

export interface LeaderStatus {
  state: 'leader' | 'standby' | 'stopped';
  holder: string;
  token: number | null;
}

/** What is led: started on taking the lease, stopped on losing it. */
export interface Led {
  start(): void;
  stop(): Promise<void>;
}

/**
 * Runs `led` (the Kafka relay) only while this process holds the relay lease.
 *
 * Timing, with F = failoverMs: the lease lasts F/2 and the leader renews it every F/6, so two
 * renewals may fail before it lapses; a standby asks every F/5, so it takes over at most
 * F/2 + F/5 = 0.7 F after the leader's last renewal, leaving 0.3 F to connect and publish.
 *
 * Fencing, twice before every batch (`fence()`, which the relay awaits):
 * - by time: the leader counts its lease valid only until the start of its last successful renewal
 *   plus F/2 minus a guard of F/10, on the monotonic clock; so a leader cut off from the lease
 *   store, or paused, stops before anyone else can take over;
 * - by tenure: the lease's token (it grows on every takeover) is read back from the store and must
 *   still be this leader's. Expiry in the store is the wall clock of whoever wrote it, so a host
 *   whose clock jumps ahead takes the lease early: the old leader's next batch finds the new token
 *   and stops there, whatever its own clock says.
 * A batch already on the wire when either happens may still land: a duplicate, which consumers
 * absorb (they are idempotent by design). Loss is impossible whatever the overlap, because each
 * relay stores a checkpoint only after the broker acknowledged every event up to it, and the
 * successor resumes from that checkpoint.
 */
export class RelayLeader {
  private readonly log: Logger;
  private readonly name: string;
  private readonly ttl: number;
  private abort = new AbortController();
  private done: Promise<void> | null = null;
  private leading = false;
  private token: number | null = null;
  private validUntil = 0;

  constructor(private readonly led: Led, private readonly options: RelayLeaderOptions) {
    this.log = options.logger.child({ component: 'relay-leader', holder: options.holder });
    this.name = options.leaseName ?? 'relay:kafka';
    this.ttl = Math.floor(options.failoverMs / 2);
    this.now = options.monotonicNow ?? (() => performance.now());
  }

  private readonly now: () => number;

  /** The fence by time: true only while this process's tenure cannot have run out. */
  mayPublish = (): boolean => this.leading && this.now() < this.validUntil;

  /** The relay's fence before each batch: by time, then by the token the store holds now. */
  fence = async (): Promise<boolean> => {
    if (!this.mayPublish()) return false;
    const token = this.token;
    const lease = await this.options.leases.read(this.name);
    if (lease?.holder === this.options.holder && lease.token === token) return true;
    this.log.warn({ token, storeToken: lease?.token ?? null, newHolder: lease?.holder ?? null }, 'relay lease taken by another process; batch not published');
    // Not the leader any more: stop now rather than at the next renewal.
    this.validUntil = 0;
    return false;
  };

  status(): LeaderStatus {
    return { state: this.done ? (this.leading ? 'leader' : 'standby') : 'stopped', holder: this.options.holder, token: this.token };
  }

  start(): void {
    if (this.done) return;
    this.abort = new AbortController();
    this.done = this.loop(this.abort.signal);
  }

  async stop(): Promise<void> {
    const done = this.done;
    if (!done) return;
    this.abort.abort();
    await done;
    this.done = null;
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const renewEvery = Math.max(50, Math.floor(this.ttl / 3));
    const pollEvery = Math.max(50, Math.floor(this.options.failoverMs / 5));
    const guard = Math.floor(this.ttl / 5);
    while (!signal.aborted) {
      const askedAt = this.now();
      try {
        const lease = await this.options.leases.acquire(this.name, this.options.holder, this.ttl);
        if (lease) {
          this.validUntil = askedAt + this.ttl - guard;
          if (!this.leading || this.token !== lease.token) await this.lead(lease.token);
        } else if (this.leading) {
          const holder = (await this.options.leases.read(this.name).catch(() => null))?.holder;
          this.log.warn({ token: this.token, newHolder: holder }, 'relay lease lost to another process; relay stopped');
          await this.follow();
        }
      } catch (err) {
        this.log.warn({ error: (err as Error).message, leading: this.leading }, 'relay lease store unreachable');
        if (this.leading && this.now() >= this.validUntil) {
          this.log.warn({ token: this.token }, 'relay lease could not be renewed in time; relay stopped');
          await this.follow();
        }
      }
      await sleep(this.leading ? renewEvery : pollEvery, signal);
    }
    if (this.leading) {
      await this.follow();
      // Lets a standby in now instead of after the lease runs out.
      await this.options.leases.release(this.name, this.options.holder).catch(() => undefined);
    }
  }

  private async lead(token: number): Promise<void> {
    if (this.leading) await this.led.stop();
    this.leading = true;
    this.token = token;
    this.log.info({ token, leaseMs: this.ttl }, 'relay lease taken; this process publishes the log to Kafka');
    this.led.start();
  }

  private async follow(): Promise<void> {
    this.leading = false;
    this.validUntil = 0;
    await this.led.stop();
  }
}
