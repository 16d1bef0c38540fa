/**
 * What a stdio MCP server inherits. A stdio server is a command run on the service's host: the
 * child sees only the variables its registration names plus a safe minimum, so the service's own
 * secrets (JWT key, database URLs, provider keys) never reach it. Which commands may run at all is
 * the operator's allowlist, a pure rule: domain/mcp/stdio-policy.ts.
 */

/**
 * The variables passed from the service's environment when they exist: enough for a program to be
 * found and to run (PATH, locale, home and temp dirs), nothing that could hold a secret. The SDK's
 * StdioClientTransport adds its own minimum (HOME, LOGNAME, PATH, SHELL, TERM, USER) on top.
 */
export const SAFE_INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'] as const;

/** The child's environment: the safe minimum, then exactly the variables the registration names. */
export function stdioEnvironment(named: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of SAFE_INHERITED_ENV) {
    const value = process.env[key];
    // A value starting with '()' is a shell function export (Shellshock-style); never pass it on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  if (env.PATH === undefined) env.PATH = '/usr/local/bin:/usr/bin:/bin';
  for (const [key, value] of Object.entries(named ?? {})) {
    if (typeof value === 'string' && key !== '' && !key.includes('=') && !key.includes('\0')) env[key] = value;
  }
  return env;
}
