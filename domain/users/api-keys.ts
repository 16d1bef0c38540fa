import { DomainError } from '../shared/decider.js';
import type { Permission } from '../shared/permissions.js';
import type { UserEvent } from './events.js';
import { MAX_ACTIVE_API_KEYS } from './fields.js';
import type { UserState } from './state.js';

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      keyId: string;
      name: string;
      /** SHA-256 of the secret: the secret itself never reaches the decider. */
      secretHash: string;
      prefix: string;
      lastFour: string;
      scopes: Permission[];
      expiresAt: string | null;
      at: string;
    }
  | { type: 'RevokeApiKey'; keyId: string; at: string };

const notFound = () => new DomainError('API_KEY_NOT_FOUND', 'API key not found', 'not_found');

/** Expired keys do not count towards the limit: they can no longer be used. */
export function activeApiKeyCount(state: UserState, at: string): number {
  const now = Date.parse(at);
  return Object.values(state.apiKeys).filter((k) => !k.revokedAt && (k.expiresAt === null || Date.parse(k.expiresAt) > now)).length;
}

export function decideApiKey(command: ApiKeyCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'CreateApiKey': {
      if (Object.hasOwn(state.apiKeys, command.keyId)) throw new DomainError('API_KEY_EXISTS', 'an API key with this id already exists', 'conflict');
      if (command.expiresAt !== null && Date.parse(command.expiresAt) <= Date.parse(command.at)) {
        throw new DomainError('INVALID_EXPIRY', 'expiresAt must be in the future', 'invalid', { field: 'body.expiresAt' });
      }
      if (activeApiKeyCount(state, command.at) >= MAX_ACTIVE_API_KEYS) {
        throw new DomainError('API_KEY_LIMIT_REACHED', `at most ${MAX_ACTIVE_API_KEYS} active API keys per user; revoke one first`, 'conflict', { limit: MAX_ACTIVE_API_KEYS });
      }
      const { keyId, name, secretHash, prefix, lastFour, scopes, expiresAt, at } = command;
      return [{ type: 'ApiKeyCreated', data: { keyId, name, secretHash, prefix, lastFour, scopes, expiresAt, createdAt: at } }];
    }
    case 'RevokeApiKey': {
      // A revoked key is gone as far as its owner can tell: revoking it again is a 404 like an unknown id.
      if (!Object.hasOwn(state.apiKeys, command.keyId) || state.apiKeys[command.keyId].revokedAt) throw notFound();
      return [{ type: 'ApiKeyRevoked', data: { keyId: command.keyId, revokedAt: command.at } }];
    }
  }
}
