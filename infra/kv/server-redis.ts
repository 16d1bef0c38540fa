import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { StdioLaunch } from '../../ports/kv.js';

/**
 * How POST /kv/configure-mcp launches `@modelcontextprotocol/server-redis` as a stdio MCP server.
 *
 * server-redis reads its Redis URL from argv[2] only, and a registration's args are stored in
 * the clear while its env is encrypted at rest and masked in answers. So the URL (which may hold a
 * password) goes into the env as REDIS_URL, and node runs a one-line ES module that copies it to
 * argv[2] before importing the server: args carry no secret.
 */
const require = createRequire(import.meta.url);

export function serverRedisEntry(): string {
  return require.resolve('@modelcontextprotocol/server-redis/package.json').replace(/package\.json$/, 'dist/index.js');
}

export const SERVER_REDIS_URL_ENV = 'REDIS_URL';

export type { StdioLaunch } from '../../ports/kv.js';

export function serverRedisLaunch(redisUrl: string): StdioLaunch {
  const entry = pathToFileURL(serverRedisEntry()).href;
  const program = `process.argv[2] = process.env.${SERVER_REDIS_URL_ENV}; await import(${JSON.stringify(entry)});`;
  return { command: process.execPath, args: ['--input-type=module', '--eval', program], env: { [SERVER_REDIS_URL_ENV]: redisUrl } };
}
