import { api, call } from '../session';
import { useLoad } from '../ui';

/**
 * Flow names by id (the first 100 flows), so lists of runs and workflows show a flow's name rather
 * than its id; an id not among them shows as itself.
 */
export function useFlowNames(): (flowId: string) => string {
  const flows = useLoad(() => call(api().GET('/flows', { params: { query: { limit: 100 } } })), []);
  const names = new Map((flows.data?.items ?? []).map((f) => [f.id, f.name]));
  return (flowId) => names.get(flowId) ?? flowId;
}
