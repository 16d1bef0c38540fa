import { expect } from 'chai';
import { DomainError } from '../../domain/shared/decider.js';
import { loadConfig } from '../../infra/config.js';
import { assertWithinBudget, catalogueOf, isKnownModel, llmCredentials, llmProviderFor } from '../../infra/llm/registry.js';

interface StoredCredential {
  provider: string;
  sealedApiKey: string;
  baseUrl: string | null;
}

/** Just enough read store for the organization queries the registry makes. */
function fakeStore(docs: { credentials?: StoredCredential[]; org?: { budgetLimitUsd: number | null }; spentMicroUsd?: number }) {
  return {
    collection: (name: string) => ({
      find: async () => (name === 'org_llm_credentials' ? (docs.credentials ?? []).map((c) => ({ ...c, orgId: 'o1', updatedAt: 'x' })) : []),
      findOne: async () => {
        if (name === 'orgs') return docs.org ? { _id: 'o1', ...docs.org } : null;
        if (name === 'org_spend') return docs.spentMicroUsd === undefined ? null : { spentMicroUsd: docs.spentMicroUsd };
        return null;
      },
    }),
  } as never;
}

const env = { OPENAI_API_KEY: 'sk-env', ANTHROPIC_API_KEY: 'ak-env', GEMINI_API_KEY: '' };
const open = (sealed: string) => {
  if (!sealed.startsWith('sealed:')) throw new Error('bad seal');
  return sealed.slice('sealed:'.length);
};
const services = (store: unknown, extra: Record<string, string> = {}) => ({ config: loadConfig({ ...env, ...extra }), readStore: store as never, sealedBox: { open } });

describe('LLM registry', () => {
  it('uses the service-wide keys outside an organization; an empty variable is no key', async () => {
    const { byProvider, problem } = await llmCredentials(services(fakeStore({})), { orgId: null });
    expect(problem).to.equal(null);
    expect(byProvider.openai).to.deep.equal({ apiKey: 'sk-env', baseUrl: 'https://api.openai.com/v1', source: 'environment' });
    expect(byProvider.anthropic?.source).to.equal('environment');
    expect(byProvider.google).to.equal(undefined);
    expect(byProvider.openai_compatible, 'no service-wide OpenAI-compatible server').to.equal(undefined);
    expect(byProvider.offline?.source).to.equal('builtin');
  });

  it("prefers the organization's credential per provider, and keeps the service's base URL unless it names one", async () => {
    const store = fakeStore({
      credentials: [
        { provider: 'openai', sealedApiKey: 'sealed:sk-org', baseUrl: null },
        { provider: 'openai_compatible', sealedApiKey: 'sealed:none', baseUrl: 'http://10.0.0.5:8000/v1' },
      ],
    });
    const { byProvider } = await llmCredentials(services(store, { OPENAI_BASE_URL: 'https://proxy.example/v1' }), { orgId: 'o1' });
    expect(byProvider.openai).to.deep.equal({ apiKey: 'sk-org', baseUrl: 'https://proxy.example/v1', source: 'organization' });
    expect(byProvider.openai_compatible).to.deep.equal({ apiKey: 'none', baseUrl: 'http://10.0.0.5:8000/v1', source: 'organization' });
    expect(byProvider.anthropic?.source, 'others fall back to the environment').to.equal('environment');
  });

  it('does not fall back to the service keys when the organization credentials cannot be opened', async () => {
    const store = fakeStore({ credentials: [{ provider: 'anthropic', sealedApiKey: 'garbage', baseUrl: null }] });
    const creds = await llmCredentials(services(store), { orgId: 'o1' });
    expect(creds.problem).to.match(/cannot be read/);
    expect(Object.keys(creds.byProvider)).to.deep.equal(['offline']);
    const err = await llmProviderFor(services(store), { orgId: 'o1' }, 'openai').catch((e) => e);
    expect(err.code).to.equal('PROVIDER_NOT_CONFIGURED');
    expect(err.message).to.match(/cannot be read/);
  });

  it('knows models from the price table; offline and OpenAI-compatible accept any name', () => {
    const config = loadConfig({ LLM_PRICES: JSON.stringify({ google: { 'gemini-x': { input: 1e-7, output: 2e-7 } } }) });
    expect(isKnownModel(config, 'openai', 'gpt-4o')).to.equal(true);
    expect(isKnownModel(config, 'openai', 'gpt-99')).to.equal(false);
    expect(isKnownModel(config, 'google', 'gemini-x'), 'added by LLM_PRICES').to.equal(true);
    expect(isKnownModel(config, 'offline', 'anything')).to.equal(true);
    expect(isKnownModel(config, 'openai_compatible', 'llama3.1:8b')).to.equal(true);
    expect(catalogueOf(config, 'anthropic').models).to.include('claude-sonnet-4-0');
  });

  describe('budget gate', () => {
    const now = () => new Date('2026-03-15T10:00:00Z');
    const gate = (docs: Parameters<typeof fakeStore>[0], orgId: string | null, provider: 'openai' | 'offline' = 'openai') =>
      assertWithinBudget({ readStore: fakeStore(docs), now }, { orgId }, provider);

    it('lets through an organization under its limit, without a limit, and the personal workspace', async () => {
      await gate({ org: { budgetLimitUsd: 1 }, spentMicroUsd: 999_999 }, 'o1');
      await gate({ org: { budgetLimitUsd: null }, spentMicroUsd: 5_000_000 }, 'o1');
      await gate({}, null);
    });

    it('answers 402 BUDGET_EXCEEDED once the month spent the limit, except for the free offline provider', async () => {
      const err = await gate({ org: { budgetLimitUsd: 1 }, spentMicroUsd: 1_000_000 }, 'o1').catch((e) => e);
      expect(err).to.be.instanceOf(DomainError);
      expect(err).to.include({ code: 'BUDGET_EXCEEDED', kind: 'payment_required' });
      expect(err.details).to.deep.equal({ limitUsd: 1, spentUsd: 1, period: '2026-03' });
      await gate({ org: { budgetLimitUsd: 0 }, spentMicroUsd: 0 }, 'o1', 'offline');
      expect(await gate({ org: { budgetLimitUsd: 0 } }, 'o1').catch((e) => e.code), 'a zero budget allows nothing').to.equal('BUDGET_EXCEEDED');
    });
  });
});
