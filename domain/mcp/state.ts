import type { McpConnectionState, McpError, McpEvent, McpTransport } from './events.js';

export interface McpEndpointConfig {
  name: string;
  transport: McpTransport;
  command: string | null;
  args: string[];
  /** Sealed values. */
  env: Record<string, string>;
  url: string | null;
  /** Sealed values. */
  headers: Record<string, string>;
  autoReconnect: boolean;
}

export interface McpServerState {
  exists: boolean;
  deleted: boolean;
  serverId: string;
  ownerId: string;
  orgId: string | null;
  workspaceId: string | null;
  config: McpEndpointConfig;
  state: McpConnectionState;
  /** The connect request being served (state `connecting`) and when it was made. */
  pendingConnect: { requestId: string; at: string } | null;
  /** The request whose success opened the current connection: a loss reported for another one is stale. */
  connectionId: string | null;
  connectedAt: string | null;
  lastError: (McpError & { at: string }) | null;
  /** Failures in a row (connect failures and losses) since the last stable connection. */
  reconnectAttempts: number;
  nextReconnectAt: string | null;
}

export const initialMcpServerState: McpServerState = {
  exists: false,
  deleted: false,
  serverId: '',
  ownerId: '',
  orgId: null,
  workspaceId: null,
  config: { name: '', transport: 'stdio', command: null, args: [], env: {}, url: null, headers: {}, autoReconnect: false },
  state: 'disconnected',
  pendingConnect: null,
  connectionId: null,
  connectedAt: null,
  lastError: null,
  reconnectAttempts: 0,
  nextReconnectAt: null,
};

const configOf = (d: McpEndpointConfig): McpEndpointConfig => ({
  name: d.name,
  transport: d.transport,
  command: d.command,
  args: d.args,
  env: d.env,
  url: d.url,
  headers: d.headers,
  autoReconnect: d.autoReconnect,
});

export function evolveMcpServer(state: McpServerState, event: McpEvent): McpServerState {
  switch (event.type) {
    case 'McpServerRegistered': {
      const d = event.data;
      return { ...initialMcpServerState, exists: true, serverId: d.serverId, ownerId: d.ownerId, orgId: d.orgId, workspaceId: d.workspaceId, config: configOf(d) };
    }
    case 'McpServerUpdated':
      return { ...state, config: configOf(event.data) };
    case 'McpServerDeleted':
      return { ...state, deleted: true, state: 'disconnected', pendingConnect: null, connectionId: null, nextReconnectAt: null };
    case 'McpAutoReconnectSet':
      // Turned on while down: a reconnect is due at once.
      return {
        ...state,
        config: { ...state.config, autoReconnect: event.data.enabled },
        nextReconnectAt: event.data.enabled ? (state.nextReconnectAt ?? (state.state === 'error' ? event.data.at : null)) : null,
      };
    case 'McpConnectRequested':
      return { ...state, state: 'connecting', pendingConnect: { requestId: event.data.requestId, at: event.data.at }, nextReconnectAt: null };
    case 'McpServerConnected':
      return { ...state, state: 'connected', pendingConnect: null, connectionId: event.data.requestId, connectedAt: event.data.at, lastError: null, nextReconnectAt: null };
    case 'McpServerConnectFailed':
      return {
        ...state,
        state: 'error',
        pendingConnect: null,
        connectionId: null,
        lastError: { ...event.data.error, at: event.data.at },
        reconnectAttempts: event.data.attempt,
        nextReconnectAt: event.data.nextReconnectAt,
      };
    case 'McpConnectionLost':
      return {
        ...state,
        state: 'error',
        connectionId: null,
        lastError: { ...event.data.error, at: event.data.at },
        reconnectAttempts: event.data.attempt,
        nextReconnectAt: event.data.nextReconnectAt,
      };
    case 'McpServerDisconnected':
      return { ...state, state: 'disconnected', pendingConnect: null, connectionId: null, connectedAt: null, reconnectAttempts: 0, nextReconnectAt: null };
    default:
      // Requests and outcomes of calls do not change the aggregate's state.
      return state;
  }
}
