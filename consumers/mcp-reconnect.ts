import { randomUUID } from 'node:crypto';
import { executeMcpCommand, loadMcpServer } from '../commands/mcp.js';
import { connectWaitMs } from '../commands/mcp-connection.js';
import { connectStaleBefore } from '../domain/mcp/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { McpReadModel, McpRuntime, McpSettings } from '../ports/mcp.js';
import { workerContext } from './mcp-worker.js';

/** The ports the reconnector uses. */
export interface McpReconnectPorts {
  eventStore: EventStore;
  /** Its timers and background work. */
  mcp: Pick<McpRuntime, 'schedule' | 'track'>;
  /** Due reconnects, for the scan. */
  mcpReadModel: McpReadModel;
  logger: Logger;
  config: Pick<McpSettings, 'MCP_CONNECT_TIMEOUT_MS' | 'MCP_RECONNECT_SCAN_MS'>;
  now(): Date;
}

/**
 * Automatic reconnection (worker role). A lost connection or a failed connect of a flagged
 * server records when the next attempt is due (exponential backoff with jitter, decided in the
 * aggregate); the consumer schedules a timer for it, and a periodic scan of the read model finds
 * every due attempt whose timer is gone (worker restart, another worker's server after a
 * rebalance) — pending reconnects are derived from state, never held only in memory. An attempt
 * is a connect request like the user's; its failure schedules the next one.
 */
export class McpReconnector {
  constructor(private readonly ports: McpReconnectPorts) {}

  /** Called when an event says a reconnect is due at `at`. */
  due(serverId: string, at: string) {
    const delay = Date.parse(at) - this.ports.now().getTime();
    this.ports.mcp.schedule(`reconnect:${serverId}`, delay, () => this.ports.mcp.track(this.attempt(serverId)));
  }

  /** Asks for a connect when the server is still flagged and down; a connect under way is joined, not repeated. */
  async attempt(serverId: string): Promise<void> {
    const { state } = await loadMcpServer(this.ports, serverId);
    if (!state.exists || state.deleted || !state.config.autoReconnect) return;
    if (state.state !== 'error' && state.state !== 'connecting') return;
    const now = this.ports.now();
    try {
      await executeMcpCommand(this.ports, workerContext(now, state), serverId, {
        type: 'RequestConnect',
        requestId: randomUUID(),
        reason: 'auto',
        staleBefore: connectStaleBefore(now, connectWaitMs(this.ports)),
        at: now.toISOString(),
      });
    } catch (err) {
      this.ports.logger.warn({ serverId, err: (err as Error).message }, 'MCP reconnect request failed');
    }
  }

  async scan(): Promise<void> {
    const now = this.ports.now();
    const due = await this.ports.mcpReadModel.dueReconnects(now.toISOString(), connectStaleBefore(now, connectWaitMs(this.ports)));
    for (const serverId of due) await this.attempt(serverId);
  }

  start() {
    const tick = () => {
      this.ports.mcp.track(
        this.scan()
          .catch((err) => this.ports.logger.warn({ err: (err as Error).message }, 'MCP reconnect scan failed'))
          .finally(() => this.ports.mcp.schedule('reconnect-scan', this.ports.config.MCP_RECONNECT_SCAN_MS, tick)),
      );
    };
    // The first scan soon after start: reconnects that were due while no worker ran.
    this.ports.mcp.schedule('reconnect-scan', Math.min(1_000, this.ports.config.MCP_RECONNECT_SCAN_MS), tick);
  }
}
