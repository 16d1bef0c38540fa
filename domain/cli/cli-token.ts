import { z } from 'zod';
import { DomainError, type Decider } from '../shared/decider.js';

/**
 * A CLI token, stream `clitoken-<tokenId>`: a bearer credential `fcli_<tokenId>.<secret>` for one
 * user, created by hand or by redeeming a device authorization; only the secret's SHA-256 is kept.
 */
const isoTime = z.string().datetime({ offset: true });
export const cliTokenNameSchema = z.string().trim().min(1).max(100);
export const cliTokenSources = ['device', 'manual'] as const;
export type CliTokenSource = (typeof cliTokenSources)[number];

export const cliTokenEventSchemas = {
  CliTokenCreated: z.object({
    tokenId: z.string().min(1),
    userId: z.string().min(1),
    name: cliTokenNameSchema.nullable(),
    secretHash: z.string().regex(/^[0-9a-f]{64}$/),
    source: z.enum(cliTokenSources),
    /** The device authorization it was issued for (source `device`). */
    deviceId: z.string().min(1).nullable(),
    createdAt: isoTime,
    expiresAt: isoTime,
  }),
  CliTokenRevoked: z.object({ tokenId: z.string().min(1), revokedBy: z.string().min(1), revokedAt: isoTime }),
};

type Data<K extends keyof typeof cliTokenEventSchemas> = z.infer<(typeof cliTokenEventSchemas)[K]>;
export type CliTokenEvent =
  | { type: 'CliTokenCreated'; data: Data<'CliTokenCreated'> }
  | { type: 'CliTokenRevoked'; data: Data<'CliTokenRevoked'> };

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

export interface CliTokenState {
  exists: boolean;
  tokenId: string | null;
  userId: string | null;
  revokedAt: string | null;
}

export const cliTokenStreamId = (tokenId: string) => `clitoken-${tokenId}`;

export const cliTokenDecider: Decider<CliTokenCommand, CliTokenState, CliTokenEvent> = {
  initialState: { exists: false, tokenId: null, userId: null, revokedAt: null },
  eventSchemas: cliTokenEventSchemas,
  evolve(state, event) {
    switch (event.type) {
      case 'CliTokenCreated':
        return { exists: true, tokenId: event.data.tokenId, userId: event.data.userId, revokedAt: null };
      case 'CliTokenRevoked':
        return { ...state, revokedAt: event.data.revokedAt };
      default:
        return state;
    }
  },
  decide(command, state) {
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
  },
};
