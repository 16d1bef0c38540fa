import { expect } from 'chai';
import { assertWithinBudget } from '../../commands/orgs-budget.js';
import { spendStreamId } from '../../domain/orgs/spend.js';
import { DomainError } from '../../domain/shared/decider.js';
import { loadConfig } from '../../infra/config/index.js';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';
import { catalogueOf, createLlmRegistry, isKnownModel } from '../../infra/llm/registry.js';
import type { LlmCredentialLookup } from '../../ports/llm.js';

interface StoredCredential {
  provider: string;
  sealedApiKey: string;
  baseUrl: string | null;
}

/** The organization's credential lookup as the container wires it: sealed keys opened on the way out. */
function fakeStore(docs: { credentials?: StoredCredential[] }): LlmCredentialLookup {
  return {
    organization: async () => (docs.credentials ?? []).map((c) => ({ provider: c.provider, apiKey: open(c.sealedApiKey), baseUrl: c.baseUrl, updatedAt: 'x' })),
    user: async () => [],
  };
}

const env = { OPENAI_API_KEY: 'sk-env', ANTHROPIC_API_KEY: 'ak-env', GEMINI_API_KEY: '' };
const open = (sealed: string) => {
  if (!sealed.startsWith('sealed:')) throw new Error('bad seal');
  return sealed.slice('sealed:'.length);
};
const services = (credentials: LlmCredentialLookup, extra: Record<string, string> = {}) => createLlmRegistry({ config: loadConfig({ ...env, ...extra }), credentials });

describe('LLM registry', () => {
  it('uses the service-wide keys outside an organization; an empty variable is no key', async () => {
    const { byProvider, problem } = await services(fakeStore({})).credentials({ orgId: null });
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
    const { byProvider } = await services(store, { OPENAI_BASE_URL: 'https://proxy.example/v1' }).credentials({ orgId: 'o1' });
    expect(byProvider.openai).to.deep.equal({ apiKey: 'sk-org', baseUrl: 'https://proxy.example/v1', source: 'organization' });
    expect(byProvider.openai_compatible).to.deep.equal({ apiKey: 'none', baseUrl: 'http://10.0.0.5:8000/v1', source: 'organization' });
    expect(byProvider.anthropic?.source, 'others fall back to the environment').to.equal('environment');
  });

  it('does not fall back to the service keys when the organization credentials cannot be opened', async () => {
    const store = fakeStore({ credentials: [{ provider: 'anthropic', sealedApiKey: 'garbage', baseUrl: null }] });
    const creds = await services(store).credentials({ orgId: 'o1' });
    expect(creds.problem).to.match(/cannot be read/);
    expect(Object.keys(creds.byProvider)).to.deep.equal(['offline']);
    const err = await services(store).providerFor({ orgId: 'o1' }, 'openai').catch((e) => e);
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

  describe('budget gate (commands/orgs-budget.ts, decided on the log)', () => {
    const now = () => new Date('2026-03-15T10:00:00Z');
    const metadata = { actorId: null, orgId: 'o1', workspaceId: null, correlationId: 'c', causationId: null, requestId: null, occurredAt: '2026-03-01T00:00:00.000Z' };
    /** The org stream with its limit (none when `org` is absent) and March's spend stream. */
    async function gate(docs: { org?: { budgetLimitUsd: number | null }; spentMicroUsd?: number }, orgId: string | null, provider: 'openai' | 'offline' = 'openai') {
      const eventStore = new SqliteEventStore(':memory:');
      const at = '2026-03-02T00:00:00.000Z';
      if (docs.org) {
        await eventStore.append('org-o1', [
          { id: 'e1', type: 'OrganizationCreated', data: { orgId: 'o1', name: 'O', description: '', createdBy: 'u1', createdAt: at }, metadata },
          { id: 'e2', type: 'OrganizationUpdated', data: { budgetLimitUsd: docs.org.budgetLimitUsd, updatedBy: 'u1', at }, metadata },
        ], 'no_stream');
      }
      if (docs.spentMicroUsd) {
        const data = { orgId: 'o1', amountUsd: docs.spentMicroUsd / 1_000_000, runId: null, spendId: null, at };
        await eventStore.append(spendStreamId('o1', '2026-03'), [{ id: 'e3', type: 'LlmSpendRecorded', data, metadata }], 'no_stream');
      }
      // Last month's spend does not count in March.
      await eventStore.append(spendStreamId('o1', '2026-02'), [{ id: 'e4', type: 'LlmSpendRecorded', data: { orgId: 'o1', amountUsd: 50, runId: null, spendId: null, at: '2026-02-20T00:00:00.000Z' }, metadata }], 'no_stream');
      try {
        await assertWithinBudget({ eventStore, clock: { now } }, { orgId }, provider);
      } finally {
        await eventStore.close();
      }
    }

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
