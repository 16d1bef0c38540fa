import { useEffect, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { useFlowNames } from '../runs/flow-names';
import { StatusBadge } from '../runs/status';
import { api, call } from '../session';
import { ErrorNote, Field, Page, formatTime, useLoad } from '../ui';
import { StartWorkflow } from './start';
import { WORKFLOW_STATUSES, type WorkflowPage, type WorkflowView } from './types';
import './workflows.css';

/**
 * /workflows: the tenant's workflows, newest first, filtered by status (GET /workflows?status=…,
 * filtered by the API), a page at a time; the filter lives in the address (?status=…).
 */
export function WorkflowsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const status = search.get('status') ?? '';
  const flowName = useFlowNames();
  const [items, setItems] = useState<WorkflowView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [more, setMore] = useState<string | null>(null);
  useEffect(() => setCursor(null), [status]);
  const page = useLoad(async () => {
    const query = { limit: 20, ...(status ? { status: status as (typeof WORKFLOW_STATUSES)[number] } : {}), ...(cursor ? { cursor } : {}) };
    return { cursor, page: (await call(api().GET('/workflows', { params: { query } }))) as unknown as WorkflowPage };
  }, [status, cursor]);
  useEffect(() => {
    if (!page.data) return;
    const { cursor: from, page: fresh } = page.data;
    setItems((old) => (from ? [...old, ...fresh.items.filter((w) => !old.some((o) => o.id === w.id))] : fresh.items));
    setMore(fresh.nextCursor);
  }, [page.data]);

  return (
    <Page title="Workflows">
      <StartWorkflow />
      <section className="card wf-card" aria-labelledby="workflow-list">
        <h2 id="workflow-list">All workflows</h2>
        <div className="wf-filters">
          <Field label="Status">
            <select
              value={status}
              onChange={(e) => navigate(`/workflows${e.target.value ? `?status=${e.target.value}` : ''}`, { replace: true })}
            >
              <option value="">Any status</option>
              {WORKFLOW_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.toLowerCase().replace('_', ' ')}
                </option>
              ))}
            </select>
          </Field>
          <button type="button" className="secondary" onClick={() => (cursor ? setCursor(null) : page.reload())} disabled={page.loading}>
            Refresh
          </button>
        </div>
        <ErrorNote error={page.error} />
        {!page.loading && items.length === 0 ? <p className="muted">No workflow{status ? ` is ${status.toLowerCase()}` : ' yet'}.</p> : null}
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
      </section>
    </Page>
  );
}
