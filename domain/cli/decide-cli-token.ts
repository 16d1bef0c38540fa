import { DomainError } from '../shared/decider.js';
import type { CliTokenEvent, CliTokenSource } from './events.js';
import type { CliTokenState } from './state-cli-token.js';

export type CliTokenCommand =
  | {
      type: 'CreateCliToken';
      tokenId: string;
      userId: string;
      name: string | null;
      secretHash: string;
      source: CliTokenSource;
      deviceId: string | null;
      at: string;
      expiresAt: string;
    }
  /** `userId` is the caller: only the owner may revoke, anyone else is told it does not exist. */
  | { type: 'RevokeCliToken'; userId: string; at: string };

export function decideCliToken(command: CliTokenCommand, state: CliTokenState): CliTokenEvent[] {
  switch (command.type) {
    case 'CreateCliToken': {
      if (state.exists) throw new DomainError('CLI_TOKEN_EXISTS', `CLI token ${command.tokenId} already exists`, 'conflict');
      if (Date.parse(command.expiresAt) <= Date.parse(command.at)) {
        throw new DomainError('INVALID_EXPIRY', 'a CLI token must expire after it is created', 'invalid', { field: 'body.expiresInDays' });
      }
      const { tokenId, userId, name, secretHash, source, deviceId, at, expiresAt } = command;
      return [{ type: 'CliTokenCreated', data: { tokenId, userId, name, secretHash, source, deviceId, createdAt: at, expiresAt } }];
    }
    case 'RevokeCliToken':
      if (!state.exists || state.userId !== command.userId) throw new DomainError('CLI_TOKEN_NOT_FOUND', 'CLI token not found', 'not_found');
      // Revoking twice is harmless: the caller wanted it revoked and it is.
      if (state.revokedAt !== null) return [];
      return [{ type: 'CliTokenRevoked', data: { tokenId: state.tokenId!, revokedBy: command.userId, revokedAt: command.at } }];
  }
}
