import { useEffect, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { useFlows } from '../runs/flow-names';
import { StatusBadge } from '../runs/status';
import { api, call } from '../session';
import { ErrorNote, Field, Page, formatTime, useLoad } from '../ui';
import { StartWorkflow } from './start';
import { WORKFLOW_STATUSES, type WorkflowPage, type WorkflowView } from './types';
import './workflows.css';

/**
 * /workflows: the tenant's workflows, newest first, filtered by status and flow (GET /workflows
 * filters both), a page at a time; the filters live in the address (?status=…&flow=…).
 */
export function WorkflowsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const status = search.get('status') ?? '';
  const flowId = search.get('flow') ?? '';
  const { flows, flowName } = useFlows();
  const [refreshed, setRefreshed] = useState(0);
  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    navigate(`/workflows${next.size ? `?${next}` : ''}`, { replace: true });
  };
  return (
    <Page title="Workflows">
      <StartWorkflow />
      <section className="card wf-card" aria-labelledby="workflow-list">
        <h2 id="workflow-list">All workflows</h2>
        <div className="wf-filters">
          <Field label="Status">
            <select value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">Any status</option>
              {WORKFLOW_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.toLowerCase().replace('_', ' ')}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Flow">
            <select value={flowId} onChange={(e) => setFilter('flow', e.target.value)}>
              <option value="">Any flow</option>
              {flows.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          </Field>
          <button type="button" className="secondary" onClick={() => setRefreshed((n) => n + 1)}>
            Refresh
          </button>
        </div>
        {/* A new filter (or Refresh) starts a new list: no row of the previous one shows meanwhile. */}
        <WorkflowList key={`${status}|${flowId}|${refreshed}`} status={status} flowId={flowId} flowName={flowName} />
      </section>
    </Page>
  );
}

function WorkflowList({ status, flowId, flowName }: { status: string; flowId: string; flowName: (flowId: string) => string }) {
  const [items, setItems] = useState<WorkflowView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [more, setMore] = useState<string | null>(null);
  const page = useLoad(async () => {
    const query = { limit: 20, ...(status ? { status: status as (typeof WORKFLOW_STATUSES)[number] } : {}), ...(flowId ? { flowId } : {}), ...(cursor ? { cursor } : {}) };
    return (await call(api().GET('/workflows', { params: { query } }))) as unknown as WorkflowPage;
  }, [cursor]);
  useEffect(() => {
    if (!page.data) return;
    const fresh = page.data;
    setItems((old) => [...old, ...fresh.items.filter((w) => !old.some((o) => o.id === w.id))]);
    setMore(fresh.nextCursor);
  }, [page.data]);

  return (
    <>
      <ErrorNote error={page.error} />
      {page.loading && items.length === 0 ? <p className="muted">Loading…</p> : null}
      {!page.loading && items.length === 0 ? <p className="muted">{status || flowId ? 'No workflow matches the filters.' : 'No workflow yet.'}</p> : null}
      {items.length > 0 ? (
        <div className="table-wrap">
          <table className="list" aria-label="Workflows">
            <thead>
              <tr>
                <th scope="col">Workflow</th>
                <th scope="col">Status</th>
                <th scope="col">Waiting on</th>
                <th scope="col">Flow</th>
                <th scope="col">Created</th>
                <th scope="col">Closed</th>
              </tr>
            </thead>
            <tbody>
              {items.map((w) => (
                <tr key={w.id} data-status={w.status}>
                  <td>
                    <Link href={`/workflows/${w.id}`}>{w.id}</Link>
                  </td>
                  <td>
                    <StatusBadge status={w.status} />
                  </td>
                  <td>{w.waitingOn ? `${w.waitingOn.kind} ${w.waitingOn.name}` : '—'}</td>
                  <td>
                    <Link href={`/flows/${w.flowId}`}>{flowName(w.flowId)}</Link>
                  </td>
                  <td>{formatTime(w.createdAt)}</td>
                  <td>{formatTime(w.closedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {more ? (
        <button type="button" className="secondary wf-more" onClick={() => setCursor(more)} disabled={page.loading}>
          More
        </button>
      ) : null}
    </>
  );
}
