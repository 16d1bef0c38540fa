import type { NodeRun } from './run-state';

/** What the last run on show did at the selected node: state, output or error, tokens, cost, time. */
export function NodeRunDetails({ run }: { run: NodeRun | undefined }) {
  if (!run) return <p className="muted">Not run yet: press Run to see this node's output.</p>;
  return (
    <section className="flows-node-run" aria-label="This node in the last run">
      <h3>Last run</h3>
      <p>
        <span className={`status status-${run.status}`}>{run.status}</span>
        {run.executionTime !== undefined && run.executionTime !== null ? <span className="muted"> · {run.executionTime} ms</span> : null}
      </p>
      {run.usage ? (
        <p className="muted">
          Tokens {run.usage.total_tokens ?? 0} · cost {(run.usage.cost ?? 0).toFixed(4)}
        </p>
      ) : null}
      {run.error ? (
        <p className="error">
          {run.error.message} <code>{run.error.code}</code>
        </p>
      ) : null}
      {run.skipReason ? <p className="muted">Skipped: {run.skipReason}</p> : null}
      {run.status === 'completed' ? (
        <>
          <h4>Output</h4>
          <pre className="json" data-testid="node-output">{typeof run.output === 'string' ? run.output : JSON.stringify(run.output, null, 2)}</pre>
        </>
      ) : null}
    </section>
  );
}
