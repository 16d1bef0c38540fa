/** Who is calling, as established by the authenticator. */
export interface Principal {
  userId: string;
  /** The active organization and workspace; null for the personal workspace. */
  orgId: string | null;
  workspaceId: string | null;
  credential: 'jwt' | 'api_key' | 'cli_token';
  credentialId: string | null;
  /** API-key scopes; null means every scope. */
  scopes: string[] | null;
}

/** Bearer credentials that are not JWTs carry a recognisable prefix and an id: `<prefix><id>.<secret>`. */
export const API_KEY_PREFIX = 'fsk_';
export const CLI_TOKEN_PREFIX = 'fcli_';

export function formatSecretCredential(prefix: string, id: string, secret: string): string {
  return `${prefix}${id}.${secret}`;
}

export function parseSecretCredential(prefix: string, value: string): { id: string; secret: string } | null {
  if (!value.startsWith(prefix)) return null;
  const rest = value.slice(prefix.length);
  const dot = rest.indexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return null;
  return { id: rest.slice(0, dot), secret: rest.slice(dot + 1) };
}
