import { isLlmAbort } from '../../ports/llm-errors.js';
import type { LlmGateway, LlmProvider } from '../../ports/llm.js';
import type { Metrics } from '../../ports/metrics.js';

/**
 * The LLM gateway with every provider call timed: `complete` of each provider the gateway hands
 * out is observed as `observeProviderCall(provider, seconds, outcome)`. Wrapping the port in the
 * composition root keeps the adapters (infra/llm) unaware of metrics; every other member of the
 * provider passes through unchanged.
 */
export function instrumentLlmGateway(gateway: LlmGateway, metrics: Metrics): LlmGateway {
  return new Proxy(gateway, {
    get(target, key, receiver) {
      if (key !== 'providerFor') return Reflect.get(target, key, receiver);
      return async (...args: Parameters<LlmGateway['providerFor']>) => instrumentProvider(await target.providerFor(...args), metrics);
    },
  });
}

function instrumentProvider(provider: LlmProvider, metrics: Metrics): LlmProvider {
  return new Proxy(provider, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== 'complete' || typeof value !== 'function') return value;
      return async (...args: Parameters<LlmProvider['complete']>) => {
        const begin = performance.now();
        try {
          const result = await (value as LlmProvider['complete']).apply(target, args);
          metrics.observeProviderCall(target.id, (performance.now() - begin) / 1000, 'ok');
          return result;
        } catch (err) {
          metrics.observeProviderCall(target.id, (performance.now() - begin) / 1000, isLlmAbort(err) ? 'aborted' : 'error');
          throw err;
        }
      };
    },
  });
}
