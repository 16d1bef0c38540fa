import { api, call } from '../session';
import { useLoad } from '../ui';

/**
 * The flows (the first 100) for pickers, and their names by id, so lists of runs and workflows
 * show a flow's name rather than its id; an id not among them shows as itself.
 */
export function useFlows(): { flows: Array<{ id: string; name: string }>; flowName: (flowId: string) => string; error: unknown } {
  const loaded = useLoad(() => call(api().GET('/flows', { params: { query: { limit: 100 } } })), []);
  const flows = loaded.data?.items ?? [];
  const names = new Map(flows.map((f) => [f.id, f.name]));
  return { flows, flowName: (flowId) => names.get(flowId) ?? flowId, error: loaded.error };
}
