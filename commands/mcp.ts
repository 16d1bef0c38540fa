import {
  checkEndpoint,
  MASKED_SECRET,
  mcpServerDecider,
  mcpServerInputSchema,
  mcpServerStreamId,
  mcpServerUpdateSchema,
  type McpCommand,
  type McpEndpointConfig,
  type McpScope,
  type McpServerState,
  type McpServerUpdate,
  type PlainEndpoint,
} from '../domain/mcp/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Principal } from '../domain/shared/principal.js';
import { OutboundError } from '../infra/http/outbound.js';
import { isStdioCommandAllowed } from '../infra/mcp/stdio-policy.js';
import { checkMcpUrl } from '../infra/mcp/url-policy.js';
import type { Services } from '../infra/ports/services.js';
import { handleCommand, loadState, type CommandContext } from './handle.js';

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

export function loadMcpServer(services: Pick<Services, 'eventStore'>, serverId: string): Promise<{ state: McpServerState; revision: number }> {
  return loadState(services.eventStore, mcpServerStreamId(serverId), mcpServerDecider);
}

export function executeMcpCommand(services: Pick<Services, 'eventStore'>, context: CommandContext, serverId: string, command: McpCommand, expectedRevision?: number) {
  return handleCommand(services.eventStore, { streamId: mcpServerStreamId(serverId), decider: mcpServerDecider, command, context, expectedRevision });
}

/** Maps the outbound rule's refusal to the API's statuses: a refused address is forbidden, a bad URL is bad input. */
export function outboundDomainError(err: OutboundError, field = 'body.url'): DomainError {
  const kind = err.code === 'OUTBOUND_ADDRESS_REFUSED' ? 'forbidden' : 'invalid';
  return new DomainError(err.code, err.message, kind, { ...err.details, field });
}

/** The operator's rules for what a server may be: the stdio allowlist and the outbound rule for URLs. */
export async function checkEndpointPolicy(services: Pick<Services, 'config'>, endpoint: PlainEndpoint): Promise<void> {
  if (endpoint.transport === 'stdio') {
    if (!isStdioCommandAllowed(endpoint.command!, services.config.MCP_STDIO_ALLOWLIST)) {
      throw new DomainError('MCP_STDIO_NOT_ALLOWED', `the command "${endpoint.command}" is not on the operator's allowlist (MCP_STDIO_ALLOWLIST)`, 'forbidden', { field: 'body.command' });
    }
    return;
  }
  try {
    await checkMcpUrl(endpoint.url!, services.config.ALLOW_PRIVATE_NETWORK);
  } catch (err) {
    if (err instanceof OutboundError) throw outboundDomainError(err);
    throw err;
  }
}

function validationError(issues: Array<{ path: PropertyKey[]; message: string }>): DomainError {
  const fields = issues.map((i) => ({ field: ['body', ...i.path.map(String)].join('.'), message: i.message }));
  return new DomainError('VALIDATION_FAILED', fields.map((f) => `${f.field}: ${f.message}`).join('; '), 'invalid', { fields });
}

/** Seals every value; a value sent back masked keeps what was stored under that key. */
function sealAll(services: Pick<Services, 'sealedBox'>, values: Record<string, string>, previous: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value === MASKED_SECRET && previous[key] !== undefined ? previous[key] : services.sealedBox.seal(value);
  }
  return out;
}

function sealedConfig(services: Pick<Services, 'sealedBox'>, plain: PlainEndpoint, previous: McpEndpointConfig | null): McpEndpointConfig {
  return { ...plain, env: sealAll(services, plain.env, previous?.env ?? {}), headers: sealAll(services, plain.headers, previous?.headers ?? {}) };
}

/** For the policy check of an update: masked values stand for the stored ones, which passed already. */
function plainForCheck(config: McpEndpointConfig): PlainEndpoint {
  return { ...config, env: Object.fromEntries(Object.keys(config.env).map((k) => [k, MASKED_SECRET])), headers: Object.fromEntries(Object.keys(config.headers).map((k) => [k, MASKED_SECRET])) };
}

export async function registerMcpServer(
  services: Services,
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
  await checkEndpointPolicy(services, plain);
  const serverId = services.newId();
  const result = await executeMcpCommand(services, command, serverId, {
    type: 'RegisterServer',
    serverId,
    owner: mcpScopeOf(principal),
    config: sealedConfig(services, plain, null),
    at: command.now.toISOString(),
  });
  return { serverId, position: result.position!, streamId: mcpServerStreamId(serverId) };
}

export async function updateMcpServer(
  services: Services,
  command: CommandContext,
  principal: Principal,
  serverId: string,
  update: McpServerUpdate,
  expectedRevision?: number,
) {
  const parsed = mcpServerUpdateSchema.safeParse(update);
  if (!parsed.success) throw validationError(parsed.error.issues);
  const u = parsed.data;
  const { state } = await loadMcpServer(services, serverId);
  const scope = mcpScopeOf(principal);
  // The decider checks existence and scope again against the stream it appends to.
  if (!state.exists || state.deleted) throw new DomainError('MCP_SERVER_NOT_FOUND', 'MCP server not found', 'not_found');
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
  await checkEndpointPolicy(services, plain);
  const config = sealedConfig(services, plain, current);
  return executeMcpCommand(services, command, serverId, { type: 'UpdateServer', scope, config, at: command.now.toISOString() }, expectedRevision);
}

export function deleteMcpServer(services: Services, command: CommandContext, principal: Principal, serverId: string, expectedRevision?: number) {
  return executeMcpCommand(services, command, serverId, { type: 'DeleteServer', scope: mcpScopeOf(principal), at: command.now.toISOString() }, expectedRevision);
}

export function setMcpAutoReconnect(services: Services, command: CommandContext, principal: Principal, serverId: string, enabled: boolean) {
  return executeMcpCommand(services, command, serverId, { type: 'SetAutoReconnect', scope: mcpScopeOf(principal), enabled, at: command.now.toISOString() });
}

/** The endpoint as the client needs it: secrets opened. Only the worker calls this. */
export function plainEndpointOf(services: Pick<Services, 'sealedBox'>, config: McpEndpointConfig) {
  const open = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, services.sealedBox.open(v)]));
  return config.transport === 'stdio'
    ? { transport: config.transport, command: config.command ?? '', args: config.args, env: open(config.env) }
    : { transport: config.transport, url: config.url ?? '', headers: open(config.headers) };
}
