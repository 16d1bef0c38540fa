import { userDecider, userStreamId, type ApiKeyCommand } from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, type CommandContext } from './handle.js';

/** The secret is shown once by the route and never stored: only its SHA-256 reaches the log. */
export type NewApiKey = Omit<Extract<ApiKeyCommand, { type: 'CreateApiKey' }>, 'type' | 'at'>;

export function createApiKey(store: EventStore, context: CommandContext, userId: string, key: NewApiKey) {
  return handleAtContextTime(store, context, userStreamId(userId), userDecider, { type: 'CreateApiKey', ...key });
}

export function revokeApiKey(store: EventStore, context: CommandContext, userId: string, keyId: string) {
  return handleAtContextTime(store, context, userStreamId(userId), userDecider, { type: 'RevokeApiKey', keyId });
}
