import { CLI_LLM_PROVIDERS, type CliLlmProvider, type ModelMap, type ModelRoute } from './events.js';

/**
 * Which provider and model answer a requested model name: the organization's map, then the
 * service's (CLI_LLM_MODEL_MAP), then an explicit `<provider>/<model>` name, then the service's
 * default (CLI_LLM_DEFAULT_PROVIDER / CLI_LLM_DEFAULT_MODEL). In a map an exact key wins over
 * patterns (`claude-*`), and a longer pattern over a shorter one. Null: nothing routes the name.
 */
export interface RoutedModel {
  provider: CliLlmProvider;
  model: string;
  routedBy: 'organization' | 'service' | 'explicit' | 'default';
}

export function lookupModel(map: ModelMap, requested: string): ModelRoute | null {
  if (Object.hasOwn(map, requested)) return map[requested];
  const patterns = Object.keys(map)
    .filter((key) => key.endsWith('*') && requested.startsWith(key.slice(0, -1)))
    .sort((a, b) => b.length - a.length);
  return patterns.length > 0 ? map[patterns[0]] : null;
}

export function routeModel(
  requested: string,
  maps: { organization: ModelMap | null; service: ModelMap; defaultRoute: ModelRoute | null },
): RoutedModel | null {
  const fromOrg = maps.organization ? lookupModel(maps.organization, requested) : null;
  if (fromOrg) return { provider: fromOrg.provider, model: fromOrg.model ?? requested, routedBy: 'organization' };
  const fromService = lookupModel(maps.service, requested);
  if (fromService) return { provider: fromService.provider, model: fromService.model ?? requested, routedBy: 'service' };
  const slash = requested.indexOf('/');
  const named = slash > 0 ? requested.slice(0, slash) : null;
  if (named && (CLI_LLM_PROVIDERS as readonly string[]).includes(named) && slash < requested.length - 1) {
    return { provider: named as CliLlmProvider, model: requested.slice(slash + 1), routedBy: 'explicit' };
  }
  if (maps.defaultRoute) return { provider: maps.defaultRoute.provider, model: maps.defaultRoute.model ?? requested, routedBy: 'default' };
  return null;
}
