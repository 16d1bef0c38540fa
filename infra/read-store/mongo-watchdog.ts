import { MongoClient, type MongoClientOptions } from 'mongodb';

/**
 * Replaces a MongoDB client that stopped finding a server that is there.
 *
 * The faulted soak (issue 37) met a client (driver 6.22, FerretDB 1.24) that, after PostgreSQL and
 * then FerretDB restarted under load, kept its server `Unknown` for minutes: every operation failed
 * server selection with the error of a connection closed by the restart, while a new client
 * connected at once. The driver offers no public way to restart its monitoring, so when the server
 * has been unknown longer than `wedgedAfterMs` and a fresh client can ping it, the fresh client
 * takes over (`replace`) and the old one is closed. A server that is really down fails the probe,
 * and nothing changes.
 */
export interface WatchdogOptions {
  url: string;
  clientOptions: MongoClientOptions;
  /** The server unknown this long, with a fresh client able to ping it, means the client is wedged. */
  wedgedAfterMs?: number;
  checkEveryMs?: number;
  /** Installs the fresh client; resolves once it serves. */
  replace: (fresh: MongoClient) => Promise<void>;
  log?: (message: string, detail: Record<string, unknown>) => void;
}

export const WEDGED_AFTER_MS = 20_000;

export class MongoClientWatchdog {
  private unknownSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private client: MongoClient | null = null;
  private readonly onDescription = (event: { newDescription: { type: string } }) => {
    if (event.newDescription.type === 'Unknown') this.unknownSince ??= Date.now();
    else this.unknownSince = null;
  };

  constructor(private readonly options: WatchdogOptions) {}

  /** Watches `client` (and forgets the previous one). */
  watch(client: MongoClient): void {
    this.client?.off('serverDescriptionChanged', this.onDescription);
    this.client = client;
    this.unknownSince = null;
    client.on('serverDescriptionChanged', this.onDescription);
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), this.options.checkEveryMs ?? 5_000);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.client?.off('serverDescriptionChanged', this.onDescription);
    this.client = null;
  }

  private async check(): Promise<void> {
    const since = this.unknownSince;
    if (since === null || this.checking || Date.now() - since < (this.options.wedgedAfterMs ?? WEDGED_AFTER_MS)) return;
    this.checking = true;
    const fresh = new MongoClient(this.options.url, { ...this.options.clientOptions, serverSelectionTimeoutMS: 3_000 });
    try {
      await fresh.connect();
      await fresh.db('admin').command({ ping: 1 });
    } catch {
      // The server is really down: the client is right to find nothing.
      await fresh.close(true).catch(() => undefined);
      this.checking = false;
      return;
    }
    try {
      if (this.client === null || this.unknownSince !== since) {
        // Recovered meanwhile, or stopped: the probe is not needed.
        await fresh.close(true).catch(() => undefined);
        return;
      }
      this.options.log?.('read store client wedged: its server unknown while a new client reaches it; replacing it', { unknownForMs: Date.now() - since });
      await this.options.replace(fresh);
    } finally {
      this.checking = false;
    }
  }
}
