import type { Config } from '../config/index.js';
import type { KvChecker } from '../../ports/kv.js';
import { checkRedisConnection } from './check.js';
import { serverRedisLaunch } from './server-redis.js';

/** The KvChecker the container wires; the settings are read at each check (as the route did). */
export function createKvChecker(config: Pick<Config, 'ALLOW_PRIVATE_NETWORK' | 'KV_VALIDATE_TIMEOUT_MS'>): KvChecker {
  return {
    check: (url) => checkRedisConnection(url, { allowPrivateNetwork: config.ALLOW_PRIVATE_NETWORK, timeoutMs: config.KV_VALIDATE_TIMEOUT_MS }),
    serverRedisLaunch,
  };
}
