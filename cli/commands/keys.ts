import type { Command } from 'commander';
import type { RequestBody } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { usageError } from '../lib/errors.js';
import { table } from '../lib/output.js';

/**
 * `flowctl keys …`: the signed-in user's API keys (`/api-keys`). The secret is printed once, by
 * `create`; the service keeps only its hash, so `list` shows its prefix and last four characters.
 */

type ApiKey = { id: string; name: string; scopes: string[]; expiresAt: string | null; createdAt: string; prefix: string; lastFour: string };

/** `--scopes a,b` (repeatable): the service checks the names (400: exit 2). */
const scopesOf = (value: string, previous: string[] = []) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

function expiresOf(value: string): string {
  const t = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(t)) throw usageError(`--expires must be a date or date-time (2027-01-31 or 2027-01-31T12:00:00Z), not "${value}"`);
  return new Date(t).toISOString();
}

export function registerKeyCommands(program: Command) {
  const keys = program.command('keys').description('create, list and revoke your API keys');

  keys
    .command('create')
    .description('create an API key and print it: it is shown this once')
    .requiredOption('--name <name>', 'what the key is for')
    .option('--scopes <scopes>', 'comma-separated permissions (view_resources, edit_resources, manage_settings, …); default: all yours', scopesOf)
    .option('--expires <date>', 'when it stops working (default: never)', expiresOf)
    .action(async (options: { name: string; scopes?: string[]; expires?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      if (options.scopes && options.scopes.length === 0) throw usageError('--scopes names no permission');
      const body = { name: options.name, ...(options.scopes ? { scopes: options.scopes } : {}), ...(options.expires ? { expiresAt: options.expires } : {}) };
      const { apiKey, key } = await api.data(api.client.POST('/api-keys', { body: body as RequestBody<'createApiKey'> }));
      out.note('The key is shown only now: keep it somewhere safe.');
      out.result({ apiKey, key }, () => [key, `API key ${apiKey.id} "${apiKey.name}" (${apiKey.scopes.join(', ')}${apiKey.expiresAt ? `, expires ${apiKey.expiresAt}` : ''}).`]);
    });

  keys
    .command('list')
    .description('your API keys that are not revoked, newest first (never their secrets)')
    .action(async (_options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const items: ApiKey[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.data(api.client.GET('/api-keys', { params: { query: { limit: 100, cursor } } }));
        items.push(...(page.items as ApiKey[]));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      out.result({ items }, () =>
        items.length === 0
          ? 'No API keys.'
          : table(
              ['ID', 'NAME', 'KEY', 'SCOPES', 'CREATED', 'EXPIRES'],
              items.map((k) => [k.id, k.name, `${k.prefix}.…${k.lastFour}`, k.scopes.join(','), k.createdAt.slice(0, 10), k.expiresAt?.slice(0, 10) ?? 'never']),
            ),
      );
    });

  keys
    .command('revoke <keyId>')
    .description('revoke an API key: the next request with it is refused')
    .action(async (keyId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const { apiKey } = await api.data(api.client.DELETE('/api-keys/{keyId}', { params: { path: { keyId } } }));
      out.result({ apiKey }, () => `Revoked API key ${apiKey.id}.`);
    });
}
