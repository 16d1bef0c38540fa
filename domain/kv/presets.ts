/**
 * Predefined key-value store connections (GET /kv/presets): URL templates users fill in.
 * Placeholders are written `<name>` and listed in `placeholders`.
 */
export interface KvPreset {
  id: string;
  name: string;
  urlTemplate: string;
  description: string;
  tls: boolean;
  requiresPassword: boolean;
  placeholders: string[];
}

export const KV_PRESETS: readonly KvPreset[] = [
  {
    id: 'local',
    name: 'Local Redis',
    urlTemplate: 'redis://127.0.0.1:6379',
    description: 'A Redis server on this host, default port, no password (development; needs ALLOW_PRIVATE_NETWORK=true)',
    tls: false,
    requiresPassword: false,
    placeholders: [],
  },
  {
    id: 'tls',
    name: 'Redis over TLS',
    urlTemplate: 'rediss://<host>:6380',
    description: 'A Redis server that accepts TLS connections (rediss://); the certificate must be valid for <host>',
    tls: true,
    requiresPassword: false,
    placeholders: ['host'],
  },
  {
    id: 'password',
    name: 'Redis with password',
    urlTemplate: 'redis://:<password>@<host>:6379',
    description: 'A Redis server protected by requirepass (or the default ACL user); percent-encode special characters in <password>',
    tls: false,
    requiresPassword: true,
    placeholders: ['password', 'host'],
  },
  {
    id: 'acl-user',
    name: 'Redis with an ACL user over TLS',
    urlTemplate: 'rediss://<username>:<password>@<host>:6380/0',
    description: 'A Redis 6+ server with an ACL user, over TLS, database 0',
    tls: true,
    requiresPassword: true,
    placeholders: ['username', 'password', 'host'],
  },
];
