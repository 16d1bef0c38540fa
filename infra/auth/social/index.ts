import type { Config } from '../../config/index.js';
import { GitHubProvider } from './github.js';
import { GoogleProvider } from './google.js';
import type { ProviderName, SocialProvider, SocialProviders } from './provider.js';

export * from './provider.js';

const cache = new WeakMap<Config, Map<ProviderName, SocialProvider | null>>();

/**
 * The provider named `name` as configured, or null when its client id or secret is missing. One
 * instance per configuration, so OIDC discovery runs once per process.
 */
export function socialProvider(config: Config, name: ProviderName): SocialProvider | null {
  let byName = cache.get(config);
  if (!byName) cache.set(config, (byName = new Map()));
  if (!byName.has(name)) byName.set(name, build(config, name));
  return byName.get(name) ?? null;
}

/** The SocialProviders port over this configuration. */
export function socialProviders(config: Config): SocialProviders {
  return { provider: (name) => socialProvider(config, name) };
}

function build(config: Config, name: ProviderName): SocialProvider | null {
  switch (name) {
    case 'google':
      if (!config.GOOGLE_CLIENT_ID || !config.GOOGLE_CLIENT_SECRET) return null;
      return new GoogleProvider({ issuer: config.GOOGLE_ISSUER, clientId: config.GOOGLE_CLIENT_ID, clientSecret: config.GOOGLE_CLIENT_SECRET });
    case 'github':
      if (!config.GITHUB_CLIENT_ID || !config.GITHUB_CLIENT_SECRET) return null;
      return new GitHubProvider({
        clientId: config.GITHUB_CLIENT_ID,
        clientSecret: config.GITHUB_CLIENT_SECRET,
        authorizeUrl: config.GITHUB_AUTHORIZE_URL,
        tokenUrl: config.GITHUB_TOKEN_URL,
        apiUrl: config.GITHUB_API_URL,
      });
  }
}
