import type { RecordedEvent } from '../domain/shared/events.js';
import type { UserEvent } from '../domain/users/index.js';
import type { ReadStore } from '../ports/read-store.js';
import type { Projector } from './projector.js';

/** `user_llm_credentials`: one document per user and provider; sealed keys only. */
export interface UserLlmCredentialView {
  _id: string;
  userId: string;
  provider: string;
  sealedApiKey: string;
  baseUrl: string | null;
  updatedAt: string;
  [key: string]: unknown;
}

export const USER_LLM_CREDENTIALS = 'user_llm_credentials';

const userIdOf = (recorded: RecordedEvent) => recorded.streamId.slice('user-'.length);

/**
 * Its own projector (own checkpoint) so adding it projects the existing user streams from the
 * start without a rebuild of the profile collections. Writes are absolute values keyed by
 * user and provider, so a redelivered event is harmless.
 */
export const userLlmCredentialsProjector: Projector = {
  name: 'user_llm_credentials',
  categories: ['user'],
  collections: [USER_LLM_CREDENTIALS],
  async setup(store) {
    await store.collection(USER_LLM_CREDENTIALS).createIndex({ keys: { userId: 1 } });
  },
  async project(recorded, store) {
    const event = recorded as RecordedEvent & UserEvent;
    const userId = userIdOf(recorded);
    const credentials = store.collection<UserLlmCredentialView>(USER_LLM_CREDENTIALS);
    if (event.type === 'UserLlmCredentialSet') {
      const { provider, sealedApiKey, baseUrl, at } = event.data;
      const doc: UserLlmCredentialView = { _id: `${userId}:${provider}`, userId, provider, sealedApiKey, baseUrl, updatedAt: at };
      await credentials.replaceOne({ _id: doc._id }, doc, { upsert: true });
    } else if (event.type === 'UserLlmCredentialRemoved') {
      await credentials.deleteOne({ _id: `${userId}:${event.data.provider}` });
    }
  },
};

export const listUserLlmCredentialsSealed = (store: ReadStore, userId: string) =>
  store.collection<UserLlmCredentialView>(USER_LLM_CREDENTIALS).find({ userId }, { sort: { provider: 1 } });

/** A provider key as both read models (a user's, an organization's) keep it: sealed. */
export interface SealedLlmCredential {
  provider: string;
  sealedApiKey: string;
  baseUrl: string | null;
  updatedAt: string;
}

export interface LlmCredential {
  provider: string;
  apiKey: string;
  baseUrl: string | null;
  updatedAt: string;
}

/** Opened for the LLM registry only; never answer these over HTTP. */
export const openLlmCredentials = (sealedBox: { open(sealed: string): string }, sealed: SealedLlmCredential[]): LlmCredential[] =>
  sealed.map((c) => ({ provider: c.provider, apiKey: sealedBox.open(c.sealedApiKey), baseUrl: c.baseUrl, updatedAt: c.updatedAt }));

/** The registry's entry point: the user's provider keys, opened. */
export async function readUserLlmCredentials(
  services: { readStore: ReadStore; sealedBox: { open(sealed: string): string } },
  userId: string,
): Promise<LlmCredential[]> {
  return openLlmCredentials(services.sealedBox, await listUserLlmCredentialsSealed(services.readStore, userId));
}
