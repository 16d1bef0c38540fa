import type { CliTokenEvent } from './events.js';

export interface CliTokenState {
  exists: boolean;
  tokenId: string | null;
  userId: string | null;
  revokedAt: string | null;
}

export const initialCliTokenState: CliTokenState = { exists: false, tokenId: null, userId: null, revokedAt: null };

export function evolveCliToken(state: CliTokenState, event: CliTokenEvent): CliTokenState {
  switch (event.type) {
    case 'CliTokenCreated':
      return { exists: true, tokenId: event.data.tokenId, userId: event.data.userId, revokedAt: null };
    case 'CliTokenRevoked':
      return { ...state, revokedAt: event.data.revokedAt };
    default:
      return state;
  }
}
