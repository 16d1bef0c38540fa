import { DomainError } from '../shared/decider.js';
import { reconnectDelayMs, type BackoffPolicy } from './backoff.js';
import type { McpError, McpEvent, McpServerInfo, McpTransport } from './events.js';
import { requireMcpServer, type McpScope } from './scope.js';
import type { McpEndpointConfig, McpServerState } from './state.js';

export interface ReconnectInput {
  policy: BackoffPolicy;
  /** In [0, 1): the jitter, drawn by the caller. */
  random: number;
}

export type McpCommand =
  | { type: 'RegisterServer'; serverId: string; owner: McpScope; config: McpEndpointConfig; at: string }
  | { type: 'UpdateServer'; scope: McpScope; config: McpEndpointConfig; at: string }
  | { type: 'DeleteServer'; scope: McpScope; at: string }
  | { type: 'SetAutoReconnect'; scope: McpScope; enabled: boolean; at: string }
  /** `staleBefore`: a pending connect older than this is presumed lost (worker died) and may be asked again. */
  | { type: 'RequestConnect'; scope?: McpScope; requestId: string; reason: 'user' | 'auto'; staleBefore: string; at: string }
  | { type: 'RequestDisconnect'; scope?: McpScope; requestId: string; at: string }
  | {
      type: 'RecordConnected';
      requestId: string;
      serverInfo: McpServerInfo;
      capabilities: string;
      transportUsed: McpTransport;
      tools: string | null;
      at: string;
    }
  | ({ type: 'RecordConnectFailed'; requestId: string; error: McpError; at: string } & ReconnectInput)
  | ({ type: 'RecordConnectionLost'; connectionId: string; error: McpError; at: string } & ReconnectInput)
  | { type: 'RecordDisconnected'; requestId: string | null; at: string };

function nextAttempt(state: McpServerState, at: string, input: ReconnectInput, lostAfterStable: boolean) {
  const attempt = lostAfterStable ? 1 : state.reconnectAttempts + 1;
  const nextReconnectAt = state.config.autoReconnect ? new Date(Date.parse(at) + reconnectDelayMs(attempt, input.policy, input.random)).toISOString() : null;
  return { attempt, nextReconnectAt };
}

export function decideMcpServer(command: McpCommand, state: McpServerState): McpEvent[] {
  switch (command.type) {
    case 'RegisterServer': {
      if (state.exists) throw new DomainError('MCP_SERVER_EXISTS', `MCP server ${command.serverId} already exists`, 'conflict');
      const { userId, orgId, workspaceId } = command.owner;
      return [{ type: 'McpServerRegistered', data: { serverId: command.serverId, ownerId: userId, orgId, workspaceId, ...command.config, at: command.at } }];
    }
    case 'UpdateServer':
      requireMcpServer(state, command.scope);
      return [{ type: 'McpServerUpdated', data: { ...command.config, at: command.at } }];
    case 'DeleteServer':
      requireMcpServer(state, command.scope);
      return [{ type: 'McpServerDeleted', data: { at: command.at } }];
    case 'SetAutoReconnect':
      requireMcpServer(state, command.scope);
      if (state.config.autoReconnect === command.enabled) return [];
      return [{ type: 'McpAutoReconnectSet', data: { enabled: command.enabled, at: command.at } }];
    case 'RequestConnect':
      requireMcpServer(state, command.scope);
      if (state.state === 'connected') return [];
      if (state.state === 'connecting' && state.pendingConnect && state.pendingConnect.at >= command.staleBefore) return [];
      return [{ type: 'McpConnectRequested', data: { requestId: command.requestId, reason: command.reason, at: command.at } }];
    case 'RequestDisconnect':
      requireMcpServer(state, command.scope);
      return [{ type: 'McpDisconnectRequested', data: { requestId: command.requestId, at: command.at } }];
    case 'RecordConnected': {
      // A connect the user gave up on (disconnect, delete) or that a newer request replaced is not recorded.
      if (state.deleted || state.pendingConnect?.requestId !== command.requestId) return [];
      const { type: _type, ...data } = command;
      return [{ type: 'McpServerConnected', data }];
    }
    case 'RecordConnectFailed': {
      if (state.deleted || state.pendingConnect?.requestId !== command.requestId) return [];
      return [{ type: 'McpServerConnectFailed', data: { requestId: command.requestId, error: command.error, ...nextAttempt(state, command.at, command, false), at: command.at } }];
    }
    case 'RecordConnectionLost': {
      if (state.deleted || state.state !== 'connected' || state.connectionId !== command.connectionId) return [];
      const lived = state.connectedAt ? Date.parse(command.at) - Date.parse(state.connectedAt) : 0;
      const next = nextAttempt(state, command.at, command, lived >= command.policy.stableMs);
      return [{ type: 'McpConnectionLost', data: { connectionId: command.connectionId, error: command.error, ...next, at: command.at } }];
    }
    case 'RecordDisconnected':
      // Always answered when asked (the route waits for it); otherwise only a real change.
      if (command.requestId === null && state.state === 'disconnected') return [];
      return [{ type: 'McpServerDisconnected', data: { requestId: command.requestId, at: command.at } }];
  }
}
