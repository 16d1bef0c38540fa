import { z } from 'zod';
import { DomainError } from '../shared/decider.js';
import { MCP_TRANSPORTS } from './events.js';
import type { McpEndpointConfig } from './state.js';

/** Limits of a registration (README "Limits"). */
export const MCP_LIMITS = { name: 100, command: 1024, args: 64, arg: 4096, envEntries: 64, headerEntries: 32, secretValue: 8192, url: 2048 } as const;

/** What a read answers for every secret value; sending it back in an update keeps the stored value. */
export const MASKED_SECRET = '••••';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'environment variable names are letters, digits and _');
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/, 'not a valid header name');
const secretValue = z.string().max(MCP_LIMITS.secretValue);

export const mcpServerFields = {
  name: z.string().trim().min(1).max(MCP_LIMITS.name),
  transport: z.enum(MCP_TRANSPORTS),
  command: z.string().trim().min(1).max(MCP_LIMITS.command),
  args: z.array(z.string().max(MCP_LIMITS.arg)).max(MCP_LIMITS.args),
  env: z.record(envName, secretValue).refine((r) => Object.keys(r).length <= MCP_LIMITS.envEntries, `at most ${MCP_LIMITS.envEntries} variables`),
  url: z.string().trim().max(MCP_LIMITS.url).regex(/^https?:\/\//i, 'must be an http(s) URL'),
  headers: z.record(headerName, secretValue).refine((r) => Object.keys(r).length <= MCP_LIMITS.headerEntries, `at most ${MCP_LIMITS.headerEntries} headers`),
  autoReconnect: z.boolean(),
};

export const mcpServerInputSchema = z.strictObject({
  name: mcpServerFields.name,
  transport: mcpServerFields.transport,
  command: mcpServerFields.command.optional(),
  args: mcpServerFields.args.optional(),
  env: mcpServerFields.env.optional(),
  url: mcpServerFields.url.optional(),
  headers: mcpServerFields.headers.optional(),
  autoReconnect: mcpServerFields.autoReconnect.optional(),
});
export type McpServerInput = z.infer<typeof mcpServerInputSchema>;

export const mcpServerUpdateSchema = mcpServerInputSchema.partial();
export type McpServerUpdate = z.infer<typeof mcpServerUpdateSchema>;

/** Plain (not yet sealed) endpoint after defaults, checked for the transport's required fields. */
export type PlainEndpoint = McpEndpointConfig;

const invalid = (field: string, message: string) => new DomainError('MCP_INVALID_CONFIG', message, 'invalid', { field: `body.${field}` });

/** The transport decides which fields make sense: a stdio server has a command, an HTTP one a URL. */
export function checkEndpoint(e: PlainEndpoint): PlainEndpoint {
  if (e.transport === 'stdio') {
    if (!e.command) throw invalid('command', 'a stdio server needs a command');
    if (e.url) throw invalid('url', 'a stdio server has no url');
    if (Object.keys(e.headers).length > 0) throw invalid('headers', 'a stdio server has no headers');
  } else {
    if (!e.url) throw invalid('url', `an ${e.transport} server needs a url`);
    if (e.command) throw invalid('command', `an ${e.transport} server has no command`);
    if (e.args.length > 0) throw invalid('args', `an ${e.transport} server has no args`);
    if (Object.keys(e.env).length > 0) throw invalid('env', `an ${e.transport} server has no env`);
  }
  return e;
}
