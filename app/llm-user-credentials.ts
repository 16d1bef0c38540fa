import { loadState } from '../commands/handle.js';
import { userDecider, userStreamId } from '../domain/users/index.js';
import { readUserLlmCredentials, type LlmCredential } from '../projections/users-llm-credentials.js';
import type { EventStore } from '../ports/event-store.js';
import type { ReadStore } from '../ports/read-store.js';

/**
 * A user's own LLM credentials, as every llm node of a personal run asks for them. Most users keep
 * none: the user's stream (folded through the command handler's cache, so only new events are
 * read) says which providers the user set, and the read model is read only when there is one.
 * Never staler than the read model alone: a removal is seen as soon as it is in the log. Wired
 * only with a MongoDB read store (app/container.ts): the in-memory one answers faster than a log read.
 */
export function userLlmCredentials(deps: { eventStore: EventStore; readStore: ReadStore; sealedBox: { open(sealed: string): string } }) {
  return async (userId: string): Promise<LlmCredential[]> => {
    const { state } = await loadState(deps.eventStore, userStreamId(userId), userDecider);
    if (state.llmProviders.length === 0) return [];
    return readUserLlmCredentials(deps, userId);
  };
}
