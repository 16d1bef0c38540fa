import type { UserLlmProvider } from '../domain/users/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { CommandContext } from './handle.js';
import { runUserCommand } from './users-registration.js';

/**
 * Upserts (or with `apiKey: null` removes) one of the user's own provider keys. Same approach as
 * the organization's `setLlmCredential`: the key is sealed before it becomes a command, so the
 * plaintext never reaches the decider, the event or the log.
 */
export function setUserLlmCredential(
  store: EventStore,
  context: CommandContext,
  userId: string,
  input: { provider: UserLlmProvider; apiKey: string | null; baseUrl: string | null },
  seal: (plaintext: string) => string,
) {
  const at = context.now.toISOString();
  if (input.apiKey === null) return runUserCommand(store, context, userId, { type: 'RemoveUserLlmCredential', provider: input.provider, at });
  return runUserCommand(store, context, userId, {
    type: 'SetUserLlmCredential',
    provider: input.provider,
    sealedApiKey: seal(input.apiKey),
    baseUrl: input.baseUrl,
    at,
  });
}
