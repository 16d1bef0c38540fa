import type { Permission } from '../domain/shared/permissions.js';
import { userDecider, userStreamId } from '../domain/users/index.js';
import type { EventStore } from '../infra/ports/event-store.js';
import { handleCommand, type CommandContext } from './handle.js';

export interface NewApiKey {
  keyId: string;
  name: string;
  /** SHA-256 of the secret; the secret is shown once by the route and never stored. */
  secretHash: string;
  prefix: string;
  lastFour: string;
  scopes: Permission[];
  expiresAt: string | null;
}

export function createApiKey(store: EventStore, context: CommandContext, userId: string, key: NewApiKey) {
  return handleCommand(store, {
    streamId: userStreamId(userId),
    decider: userDecider,
    command: { type: 'CreateApiKey', ...key, at: context.now.toISOString() },
    context,
  });
}

export function revokeApiKey(store: EventStore, context: CommandContext, userId: string, keyId: string) {
  return handleCommand(store, {
    streamId: userStreamId(userId),
    decider: userDecider,
    command: { type: 'RevokeApiKey', keyId, at: context.now.toISOString() },
    context,
  });
}
