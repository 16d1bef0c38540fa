import {
  checkEndpoint,
  checkMcpUrlAddresses,
  isStdioCommandAllowed,
  MASKED_SECRET,
  mcpServerDecider,
  mcpServerInputSchema,
  mcpServerStreamId,
  mcpServerUpdateSchema,
  mcpUrlHost,
  mcpUrlUnresolvable,
  requireMcpServer,
  type McpCommand,
  type McpEndpointConfig,
  type McpScope,
  type McpServerState,
  type McpServerUpdate,
  type PlainEndpoint,
} from '../domain/mcp/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import type { EventStore } from '../ports/event-store.js';
import type { McpEndpoint, McpSettings } from '../ports/mcp.js';
import type { AddressResolver } from '../ports/address-resolver.js';
import type { SecretSealer } from '../ports/secret-sealer.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';

/** What the operator's rules for an endpoint need: the allowlist, the outbound setting, a resolver. */
export interface McpPolicyPorts {
  config: Pick<McpSettings, 'MCP_STDIO_ALLOWLIST' | 'ALLOW_PRIVATE_NETWORK'>;
  resolver: AddressResolver;
}

/** The ports the registry's handlers use. */
export interface McpRegistryPorts extends McpPolicyPorts {
  eventStore: EventStore;
  sealedBox: SecretSealer;
  newId(): string;
}

/** What a registration names (the route's body and POST /kv/configure-mcp's call). */
export type McpServerInput = {
  name: string;
  transport: 'stdio' | 'http' | 'sse';
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  autoReconnect?: boolean;
};

export const mcpScopeOf = (principal: Principal): McpScope => ({ userId: principal.userId, orgId: principal.orgId, workspaceId: principal.workspaceId });

export function loadMcpServer(ports: { eventStore: EventStore }, serverId: string): Promise<{ state: McpServerState; revision: number }> {
  return loadState(ports.eventStore, mcpServerStreamId(serverId), mcpServerDecider);
}

export function executeMcpCommand(ports: { eventStore: EventStore }, context: CommandContext, serverId: string, command: McpCommand, expectedRevision?: number) {
  return handleCommand(ports.eventStore, { streamId: mcpServerStreamId(serverId), decider: mcpServerDecider, command, context, expectedRevision });
}

/** The operator's rules for what a server may be: the stdio allowlist and the outbound rule for URLs. */
export async function checkEndpointPolicy(ports: McpPolicyPorts, endpoint: PlainEndpoint): Promise<void> {
  if (endpoint.transport === 'stdio') {
    if (!isStdioCommandAllowed(endpoint.command!, ports.config.MCP_STDIO_ALLOWLIST)) {
      throw new DomainError('MCP_STDIO_NOT_ALLOWED', `the command "${endpoint.command}" is not on the operator's allowlist (MCP_STDIO_ALLOWLIST)`, 'forbidden', { field: 'body.command' });
    }
    return;
  }
  const host = mcpUrlHost(endpoint.url!);
  if (ports.config.ALLOW_PRIVATE_NETWORK) return;
  let addresses;
  try {
    addresses = await ports.resolver.resolve(host);
  } catch {
    throw mcpUrlUnresolvable(host);
  }
  checkMcpUrlAddresses(host, addresses);
}

function validationError(issues: Array<{ path: PropertyKey[]; message: string }>): DomainError {
  const fields = issues.map((i) => ({ field: ['body', ...i.path.map(String)].join('.'), message: i.message }));
  return new DomainError('VALIDATION_FAILED', fields.map((f) => `${f.field}: ${f.message}`).join('; '), 'invalid', { fields });
}

/** Seals every value; a value sent back masked keeps what was stored under that key. */
function sealAll(sealer: SecretSealer, values: Record<string, string>, previous: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value === MASKED_SECRET && previous[key] !== undefined ? previous[key] : sealer.seal(value);
  }
  return out;
}

function sealedConfig(sealer: SecretSealer, plain: PlainEndpoint, previous: McpEndpointConfig | null): McpEndpointConfig {
  return { ...plain, env: sealAll(sealer, plain.env, previous?.env ?? {}), headers: sealAll(sealer, plain.headers, previous?.headers ?? {}) };
}

/** For the policy check of an update: masked values stand for the stored ones, which passed already. */
function plainForCheck(config: McpEndpointConfig): PlainEndpoint {
  return { ...config, env: Object.fromEntries(Object.keys(config.env).map((k) => [k, MASKED_SECRET])), headers: Object.fromEntries(Object.keys(config.headers).map((k) => [k, MASKED_SECRET])) };
}

export async function registerMcpServer(
  ports: McpRegistryPorts,
  command: CommandContext,
  principal: Principal,
  input: McpServerInput,
): Promise<{ serverId: string; position: number; streamId: string }> {
  const parsed = mcpServerInputSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const i = parsed.data;
  const plain = checkEndpoint({
    name: i.name,
    transport: i.transport,
    command: i.command ?? null,
    args: i.args ?? [],
    env: i.env ?? {},
    url: i.url ?? null,
    headers: i.headers ?? {},
    autoReconnect: i.autoReconnect ?? false,
  });
  await checkEndpointPolicy(ports, plain);
  const serverId = ports.newId();
  const result = await executeMcpCommand(ports, command, serverId, {
    type: 'RegisterServer',
    serverId,
    owner: mcpScopeOf(principal),
    config: sealedConfig(ports.sealedBox, plain, null),
    at: command.now.toISOString(),
  });
  return { serverId, position: result.position!, streamId: mcpServerStreamId(serverId) };
}

export async function updateMcpServer(
  ports: McpRegistryPorts,
  command: CommandContext,
  principal: Principal,
  serverId: string,
  update: McpServerUpdate,
  expectedRevision?: number,
) {
  const parsed = mcpServerUpdateSchema.safeParse(update);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const u = parsed.data;
  const { state } = await loadMcpServer(ports, serverId);
  const scope = mcpScopeOf(principal);
  // The decider checks existence and scope again against the stream it appends to.
  requireMcpServer(state, null);
  const current = state.config;
  const transportChanged = u.transport !== undefined && u.transport !== current.transport;
  // Switching transport drops the other transport's fields unless the update names them.
  const base: McpEndpointConfig = transportChanged
    ? { ...current, transport: u.transport!, ...(u.transport === 'stdio' ? { url: null, headers: {} } : { command: null, args: [], env: {} }) }
    : current;
  const plain = checkEndpoint({
    name: u.name ?? base.name,
    transport: base.transport,
    command: u.command ?? base.command,
    args: u.args ?? base.args,
    env: u.env ?? plainForCheck(base).env,
    url: u.url ?? base.url,
    headers: u.headers ?? plainForCheck(base).headers,
    autoReconnect: u.autoReconnect ?? base.autoReconnect,
  });
  await checkEndpointPolicy(ports, plain);
  const config = sealedConfig(ports.sealedBox, plain, current);
  return executeMcpCommand(ports, command, serverId, { type: 'UpdateServer', scope, config, at: command.now.toISOString() }, expectedRevision);
}

export function deleteMcpServer(ports: { eventStore: EventStore }, command: CommandContext, principal: Principal, serverId: string, expectedRevision?: number) {
  return executeMcpCommand(ports, command, serverId, { type: 'DeleteServer', scope: mcpScopeOf(principal), at: command.now.toISOString() }, expectedRevision);
}

export function setMcpAutoReconnect(ports: { eventStore: EventStore }, command: CommandContext, principal: Principal, serverId: string, enabled: boolean) {
  return executeMcpCommand(ports, command, serverId, { type: 'SetAutoReconnect', scope: mcpScopeOf(principal), enabled, at: command.now.toISOString() });
}

/** The endpoint as the client needs it: secrets opened. Only the worker calls this. */
export function plainEndpointOf(sealer: SecretSealer, config: McpEndpointConfig): McpEndpoint {
  const open = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, sealer.open(v)]));
  return config.transport === 'stdio'
    ? { transport: config.transport, command: config.command ?? '', args: config.args, env: open(config.env) }
    : { transport: config.transport, url: config.url ?? '', headers: open(config.headers) };
}
