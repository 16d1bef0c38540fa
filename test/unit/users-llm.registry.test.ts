import { expect } from 'chai';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { UserEvent } from '../../domain/users/index.js';
import { loadConfig } from '../../infra/config/index.js';
import { createLlmRegistry } from '../../infra/llm/registry.js';
import type { ReadStore } from '../../ports/read-store.js';
import { readOrgLlmCredentials } from '../../projections/orgs-queries.js';
import { MemoryReadStore } from '../../infra/read-store/memory.js';
import { readUserLlmCredentials, userLlmCredentialsProjector } from '../../projections/users-llm-credentials.js';
import { projectionSpec } from '../support/projection-spec.js';

/** The registry with the lookups the container wires (the read models' query functions). */
function registryOf(services: { config: ReturnType<typeof loadConfig>; readStore: ReadStore; sealedBox: { open(sealed: string): string } }) {
  return createLlmRegistry({
    config: services.config,
    credentials: { organization: (orgId) => readOrgLlmCredentials(services, orgId), user: (userId) => readUserLlmCredentials(services, userId) },
  });
}
const llmCredentials = (services: Parameters<typeof registryOf>[0], caller: { orgId: string | null; userId?: string | null }) => registryOf(services).credentials(caller);
const llmProviderFor = (services: Parameters<typeof registryOf>[0], caller: { orgId: string | null; userId?: string | null }, provider: 'anthropic') => registryOf(services).providerFor(caller, provider);

const at = '2026-02-03T00:00:00.000Z';
let position = 0;
function recorded(streamId: string, events: UserEvent[], firstRevision = 0): RecordedEvent[] {
  return events.map((e, i) => ({
    id: `e${++position}`, type: e.type, streamId, revision: firstRevision + i, position, schemaVersion: 1, data: e.data,
    metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: at },
  }));
}
const open = (sealed: string) => {
  if (!sealed.startsWith('v1.')) throw new Error('bad seal');
  return sealed.slice('v1.'.length);
};
const setEvent = (provider: 'openai' | 'anthropic' | 'openai_compatible', key: string, baseUrl: string | null = null): UserEvent => ({
  type: 'UserLlmCredentialSet', data: { provider, sealedApiKey: `v1.${key}`, baseUrl, at },
});

async function storeWith(events: RecordedEvent[]) {
  const store = new MemoryReadStore();
  await userLlmCredentialsProjector.setup(store);
  for (const e of events) await userLlmCredentialsProjector.project(e, store);
  return store;
}

describe('user LLM credentials: projection and registry order', () => {
  it('projects one document per user and provider; a remove deletes it; a redelivery is harmless', async () => {
    const events = recorded('user-u1', [
      setEvent('openai', 'old'),
      setEvent('openai', 'new'),
      setEvent('anthropic', 'ant'),
      { type: 'UserLlmCredentialRemoved', data: { provider: 'anthropic', at } },
    ]);
    const store = await storeWith([...events, ...events.slice(1)]);
    const other = recorded('user-u2', [setEvent('openai', 'u2-key')]);
    for (const e of other) await userLlmCredentialsProjector.project(e, store);
    const docs = await store.collection('user_llm_credentials').find({ userId: 'u1' });
    expect(docs).to.deep.equal([{ _id: 'u1:openai', userId: 'u1', provider: 'openai', sealedApiKey: 'v1.new', baseUrl: null, updatedAt: at }]);
    expect(await readUserLlmCredentials({ readStore: store, sealedBox: { open } }, 'u1')).to.deep.equal([{ provider: 'openai', apiKey: 'new', baseUrl: null, updatedAt: at }]);
    expect((await readUserLlmCredentials({ readStore: store, sealedBox: { open } }, 'u2'))[0].apiKey).to.equal('u2-key');
  });

  it('projects the same documents on every read store, also after a redelivery', async () => {
    await projectionSpec([userLlmCredentialsProjector])
      .given([
        { streamId: 'user-u1', event: setEvent('openai', 'old') },
        { streamId: 'user-u1', event: setEvent('openai', 'new') },
        { streamId: 'user-u1', event: setEvent('anthropic', 'ant') },
        { streamId: 'user-u1', event: { type: 'UserLlmCredentialRemoved', data: { provider: 'anthropic', at } } },
        { streamId: 'user-u2', event: setEvent('openai', 'u2-key') },
      ])
      .thenDocuments('user_llm_credentials', [
        { _id: 'u1:openai', userId: 'u1', provider: 'openai', sealedApiKey: 'v1.new', baseUrl: null, updatedAt: at },
        { _id: 'u2:openai', userId: 'u2', provider: 'openai', sealedApiKey: 'v1.u2-key' },
      ]);
  });

  it("in the personal workspace the user's own key comes before the environment's; others fall back", async () => {
    const store = await storeWith(recorded('user-u1', [setEvent('openai', 'sk-user'), setEvent('openai_compatible', 'none', 'http://127.0.0.1:9/v1')]));
    const services = { config: loadConfig({ OPENAI_API_KEY: 'sk-env', ANTHROPIC_API_KEY: 'ak-env', OPENAI_BASE_URL: 'https://proxy.example/v1' }), readStore: store, sealedBox: { open } };
    const { byProvider, problem } = await llmCredentials(services, { orgId: null, userId: 'u1' });
    expect(problem).to.equal(null);
    expect(byProvider.openai).to.deep.equal({ apiKey: 'sk-user', baseUrl: 'https://proxy.example/v1', source: 'user' });
    expect(byProvider.openai_compatible).to.deep.equal({ apiKey: 'none', baseUrl: 'http://127.0.0.1:9/v1', source: 'user' });
    expect(byProvider.anthropic).to.deep.equal({ apiKey: 'ak-env', baseUrl: 'https://api.anthropic.com', source: 'environment' });
    // Without a user id (a caller that does not pass one) only the environment counts.
    expect((await llmCredentials(services, { orgId: null })).byProvider.openai?.source).to.equal('environment');
    // Another user's keys are not this user's.
    expect((await llmCredentials(services, { orgId: null, userId: 'u2' })).byProvider.openai?.source).to.equal('environment');
  });

  it("never uses the user's own key in an organization's workspace", async () => {
    const store = await storeWith(recorded('user-u1', [setEvent('anthropic', 'ak-user')]));
    const services = { config: loadConfig({ OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '' }), readStore: store, sealedBox: { open } };
    expect((await llmCredentials(services, { orgId: null, userId: 'u1' })).byProvider.anthropic?.source).to.equal('user');
    const inOrg = await llmCredentials(services, { orgId: 'o1', userId: 'u1' });
    expect(inOrg.byProvider.anthropic).to.equal(undefined);
    try {
      await llmProviderFor(services, { orgId: 'o1', userId: 'u1' }, 'anthropic');
      expect.fail('expected PROVIDER_NOT_CONFIGURED');
    } catch (err) {
      expect((err as { code: string }).code).to.equal('PROVIDER_NOT_CONFIGURED');
    }
  });

  it("does not fall back to the service keys when the user's credentials cannot be opened", async () => {
    const store = new MemoryReadStore();
    await store.collection('user_llm_credentials').insertOne({ _id: 'u1:openai', userId: 'u1', provider: 'openai', sealedApiKey: 'garbage', baseUrl: null, updatedAt: at });
    const services = { config: loadConfig({ OPENAI_API_KEY: 'sk-env' }), readStore: store, sealedBox: { open } };
    const creds = await llmCredentials(services, { orgId: null, userId: 'u1' });
    expect(creds.problem).to.match(/cannot be read/);
    expect(creds.byProvider.openai).to.equal(undefined);
    expect(creds.byProvider.offline?.source).to.equal('builtin');
  });
});
