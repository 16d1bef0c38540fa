import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import { follow } from '../live';
import { ConsoleError, api, call } from '../session';
import { ErrorNote, Page, formatTime, useLoad } from '../ui';
import { RunEvents } from './events';
import { applyRunFrame } from './live';
import { JsonValue, StatusBadge, formatCost, formatDuration } from './status';
import { StopRun } from './stop';
import { isFinalRun, type NodeView, type ProcessView } from './types';
import './runs.css';

/**
 * /runs/:processId: one run, node by node. While the run is not final its live stream moves the
 * rows on as events arrive; when the stream ends the run is read once more for what frames do not
 * carry (run outputs, totals).
 */
export function RunPage({ params }: { params: Record<string, string | undefined> }) {
  const processId = params.processId ?? '';
  const loaded = useLoad(async () => ((await call(api().GET('/processes/{processId}', { params: { path: { processId } } }))) as unknown as { process: ProcessView }).process, [processId]);
  const [view, setView] = useState<ProcessView | undefined>(undefined);
  const [live, setLive] = useState<'off' | 'on' | 'lost'>('off');
  useEffect(() => setView(loaded.data), [loaded.data]);

  const final = view ? isFinalRun(view.status) : true;
  useEffect(() => {
    if (!loaded.data || isFinalRun(loaded.data.status)) return;
    setLive('on');
    const stop = follow(
      `/processes/${encodeURIComponent(processId)}/stream`,
      (frame) => setView((v) => (v ? applyRunFrame(v, frame.data) : v)),
      (error) => {
        setLive(error ? 'lost' : 'off');
        loaded.reload();
      },
    );
    return stop;
    // Follows once per run loaded while not final; the reload at the end does not follow again.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [processId, loaded.data && !isFinalRun(loaded.data.status)]);

  return (
    <Page
      title={`Run ${processId.slice(0, 8)}`}
      actions={
        <>
          {view && !final ? <StopRun processId={processId} onStopped={(after) => setView((v) => (v ? { ...v, ...after } : after))} /> : null}
          <Link href="/runs">All runs</Link>
        </>
      }
    >
      <ErrorNote error={loaded.error} />
      {view ? (
        <>
          <section className="card" aria-label="Summary">
            <dl className="run-summary">
              <div>
                <dt>Run</dt>
                <dd>
                  <code>{processId}</code>
                </dd>
              </div>
              <div>
                <dt>Status</dt>
                <dd data-testid="run-status" data-status={view.status}>
                  <StatusBadge status={view.status} />
                </dd>
              </div>
              <div>
                <dt>Flow</dt>
                <dd>
                  <Link href={`/flows/${view.flowId}`}>Open the flow's canvas</Link>
                </dd>
              </div>
              <div>
                <dt>Requested</dt>
                <dd>{formatTime(view.requestedAt)}</dd>
              </div>
              <div>
                <dt>Duration</dt>
                <dd>{formatDuration(view.startedAt && view.finishedAt ? Date.parse(view.finishedAt) - Date.parse(view.startedAt) : null)}</dd>
              </div>
              <div>
                <dt>Tokens</dt>
                <dd>{view.usage?.total_tokens ?? 0}</dd>
              </div>
              <div>
                <dt>Cost</dt>
                <dd>{formatCost(view.usage?.cost)}</dd>
              </div>
            </dl>
            <p className="muted live-note" aria-live="polite">
              {live === 'on' ? 'Live: rows update as the run goes.' : live === 'lost' ? 'The live stream was lost; reload to see the latest.' : final ? 'The run is over.' : ''}
            </p>
            {view.error ? <ErrorNote error={new ConsoleError({ code: view.error.code, message: view.error.reason }, 200)} /> : null}
          </section>
          <NodesTable nodes={view.nodes} />
          {view.outputs && Object.keys(view.outputs).length > 0 ? (
            <section className="card run-card" aria-labelledby="run-outputs">
              <h2 id="run-outputs">Outputs</h2>
              <JsonValue value={view.outputs} label="Run outputs" />
            </section>
          ) : null}
          <RunEvents key={final ? 'final' : 'live'} processId={processId} />
        </>
      ) : loaded.loading ? (
        <p>Loading…</p>
      ) : null}
    </Page>
  );
}

function NodesTable({ nodes }: { nodes: NodeView[] }) {
  return (
    <section className="card run-card" aria-labelledby="run-nodes">
      <h2 id="run-nodes">Nodes</h2>
      <div className="table-wrap">
        <table className="list run-nodes" aria-labelledby="run-nodes">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Status</th>
              <th scope="col">Duration</th>
              <th scope="col">Tokens</th>
              <th scope="col">Cost</th>
              <th scope="col">Output or error</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((n) => (
              <tr key={n.nodeId} data-node-id={n.nodeId} data-status={n.status}>
                <th scope="row">
                  {n.nodeId}
                  {n.nodeType ? <div className="muted">{n.nodeType}</div> : null}
                </th>
                <td>
                  <StatusBadge status={n.status} />
                </td>
                <td>{formatDuration(n.executionTime)}</td>
                <td>{n.usage?.total_tokens ?? '—'}</td>
                <td>{formatCost(n.usage?.cost)}</td>
                <td>
                  {n.error ? (
                    <span className="error-text">
                      {n.error.code ? <code>{n.error.code}</code> : null} {n.error.message}
                    </span>
                  ) : n.status === 'skipped' ? (
                    <span className="muted">{n.skipReason}</span>
                  ) : n.status === 'completed' ? (
                    <JsonValue value={n.output} label={`Output of ${n.nodeId}`} />
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
