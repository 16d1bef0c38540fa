import { useEffect, useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Field, Page, formatTime, useLoad } from '../ui';
import { useFlows } from './flow-names';
import { StatusBadge, formatDuration } from './status';
import { RUN_STATUSES, type ProcessPage, type ProcessView } from './types';
import './runs.css';

/**
 * /runs: the runs of one flow (GET /flows/{flowId}/processes, newest first, a page at a time), and
 * the runs queued or running anywhere in the workspace (GET /processes/running). The flow and the
 * status filter live in the address (?flow=…&status=…) so a filtered list can be shared. The API
 * filters a flow's runs by flow only: the status filter applies to the pages loaded, and "More"
 * loads the next page.
 */
export function RunsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const flowId = search.get('flow') ?? '';
  const status = search.get('status') ?? '';
  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(search);
    if (value) next.set(key, value);
    else next.delete(key);
    navigate(`/runs${next.size ? `?${next}` : ''}`, { replace: true });
  };
  const { flows, flowName, error: flowsError } = useFlows();
  return (
    <Page title="Runs">
      <RunningNow flowName={flowName} />
      <section className="card runs-card" aria-labelledby="flow-runs">
        <h2 id="flow-runs">Runs of a flow</h2>
        <ErrorNote error={flowsError} />
        <div className="runs-filters">
          <Field label="Flow">
            <select value={flowId} onChange={(e) => setFilter('flow', e.target.value)}>
              <option value="">Choose a flow…</option>
              {flows.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Status">
            <select value={status} onChange={(e) => setFilter('status', e.target.value)}>
              <option value="">Any status</option>
              {RUN_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.replace('_', ' ')}
                </option>
              ))}
            </select>
          </Field>
        </div>
        {flowId ? <FlowRuns key={flowId} flowId={flowId} status={status} /> : <p className="muted">Choose a flow to see its runs.</p>}
      </section>
    </Page>
  );
}

function RunningNow({ flowName }: { flowName: (flowId: string) => string }) {
  const running = useLoad(async () => (await call(api().GET('/processes/running', { params: { query: { limit: 20 } } }))) as unknown as ProcessPage, []);
  // Runs start and end on their own: the list is read again every few seconds while it is shown.
  useEffect(() => {
    const timer = setInterval(running.reload, 5000);
    return () => clearInterval(timer);
  }, [running.reload]);
  return (
    <section className="card runs-card" aria-labelledby="running-now">
      <div className="runs-head">
        <h2 id="running-now">Running now</h2>
        <button type="button" className="secondary" onClick={running.reload} disabled={running.loading}>
          Refresh
        </button>
      </div>
      <ErrorNote error={running.error} />
      {running.data && running.data.items.length === 0 ? <p className="muted">Nothing is queued or running.</p> : null}
      {running.data && running.data.items.length > 0 ? <RunTable runs={running.data.items} label="Running now" flowName={flowName} /> : null}
    </section>
  );
}

function FlowRuns({ flowId, status }: { flowId: string; status: string }) {
  const [runs, setRuns] = useState<ProcessView[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [more, setMore] = useState<string | null | undefined>(undefined);
  const page = useLoad(
    async () => (await call(api().GET('/flows/{flowId}/processes', { params: { path: { flowId }, query: { limit: 20, ...(cursor ? { cursor } : {}) } } }))) as unknown as ProcessPage,
    [flowId, cursor],
  );
  useEffect(() => {
    if (!page.data) return;
    const fresh = page.data;
    setRuns((old) => (cursor ? [...old, ...fresh.items.filter((r) => !old.some((o) => o.processId === r.processId))] : fresh.items));
    setMore(fresh.nextCursor);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page.data]);
  const shown = status ? runs.filter((r) => r.status === status) : runs;
  return (
    <>
      <ErrorNote error={page.error} />
      <p className="muted" aria-live="polite">
        {page.loading && runs.length === 0 ? 'Loading…' : `${shown.length} of ${runs.length} loaded run${runs.length === 1 ? '' : 's'}${status ? ` are ${status.replace('_', ' ')}` : ''}.`}{' '}
        <Link href={`/flows/${flowId}`}>Open the flow</Link>
      </p>
      {shown.length > 0 ? <RunTable runs={shown} label="Runs of the flow" /> : null}
      <div className="runs-more">
        {more ? (
          <button type="button" className="secondary" onClick={() => setCursor(more)} disabled={page.loading}>
            More
          </button>
        ) : null}
        <button type="button" className="secondary" onClick={() => (cursor ? setCursor(null) : page.reload())} disabled={page.loading}>
          Refresh
        </button>
      </div>
    </>
  );
}

/** `flowName` given: a column names each run's flow. */
function RunTable({ runs, label, flowName }: { runs: ProcessView[]; label: string; flowName?: (flowId: string) => string }) {
  return (
    <div className="table-wrap">
      <table className="list" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Run</th>
            {flowName ? <th scope="col">Flow</th> : null}
            <th scope="col">Status</th>
            <th scope="col">Requested</th>
            <th scope="col">Duration</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.processId} data-status={r.status}>
              <td>
                <Link href={`/runs/${r.processId}`}>{r.processId}</Link>
                {r.mode === 'node' ? <span className="muted"> (node {r.nodeId})</span> : null}
              </td>
              {flowName ? (
                <td>
                  <Link href={`/flows/${r.flowId}`}>{flowName(r.flowId)}</Link>
                </td>
              ) : null}
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>{formatTime(r.requestedAt)}</td>
              <td>{formatDuration(r.startedAt && r.finishedAt ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : null)}</td>
              <td>{r.source}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
