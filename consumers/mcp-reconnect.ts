import { executeMcpCommand, loadMcpServer } from '../commands/mcp.js';
import { connectWaitMs } from '../commands/mcp-connection.js';
import { dueReconnects } from '../projections/mcp.js';
import type { Services } from '../infra/ports/services.js';
import { randomUUID } from 'node:crypto';
import { workerContext } from './mcp-worker.js';

/**
 * Automatic reconnection (worker role). A lost connection or a failed connect of a flagged
 * server records when the next attempt is due (exponential backoff with jitter, decided in the
 * aggregate); the consumer schedules a timer for it, and a periodic scan of the read model finds
 * every due attempt whose timer is gone (worker restart, another worker's server after a
 * rebalance) — pending reconnects are derived from state, never held only in memory. An attempt
 * is a connect request like the user's; its failure schedules the next one.
 */
export class McpReconnector {
  constructor(private readonly services: Services) {}

  /** Called when an event says a reconnect is due at `at`. */
  due(serverId: string, at: string) {
    const delay = Date.parse(at) - Date.now();
    this.services.mcp.schedule(`reconnect:${serverId}`, delay, () => this.services.mcp.track(this.attempt(serverId)));
  }

  /** Asks for a connect when the server is still flagged and down; a connect under way is joined, not repeated. */
  async attempt(serverId: string): Promise<void> {
    const { state } = await loadMcpServer(this.services, serverId);
    if (!state.exists || state.deleted || !state.config.autoReconnect) return;
    if (state.state !== 'error' && state.state !== 'connecting') return;
    const now = this.services.now();
    try {
      await executeMcpCommand(this.services, workerContext(this.services, state), serverId, {
        type: 'RequestConnect',
        requestId: randomUUID(),
        reason: 'auto',
        staleBefore: new Date(now.getTime() - connectWaitMs(this.services)).toISOString(),
        at: now.toISOString(),
      });
    } catch (err) {
      this.services.logger.warn({ serverId, err: (err as Error).message }, 'MCP reconnect request failed');
    }
  }

  async scan(): Promise<void> {
    const now = this.services.now();
    const due = await dueReconnects(this.services.readStore, now.toISOString(), new Date(now.getTime() - connectWaitMs(this.services)).toISOString());
    for (const doc of due) await this.attempt(doc._id);
  }

  start() {
    const tick = () => {
      this.services.mcp.track(
        this.scan()
          .catch((err) => this.services.logger.warn({ err: (err as Error).message }, 'MCP reconnect scan failed'))
          .finally(() => this.services.mcp.schedule('reconnect-scan', this.services.config.MCP_RECONNECT_SCAN_MS, tick)),
      );
    };
    // The first scan soon after start: reconnects that were due while no worker ran.
    this.services.mcp.schedule('reconnect-scan', Math.min(1_000, this.services.config.MCP_RECONNECT_SCAN_MS), tick);
  }
}
