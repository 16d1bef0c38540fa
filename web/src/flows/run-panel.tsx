import { useEffect, useRef, useState } from 'react';
import { Link } from 'wouter';
import { follow } from '../live';
import { api, call } from '../session';
import { ErrorNote, useAction } from '../ui';
import { applyRunEvent, type RunNodes } from './run-state';

const FINAL: Record<string, string> = { RunCompleted: 'completed', RunFailed: 'failed', RunStopped: 'stopped', RunTimedOut: 'timed_out' };

/**
 * Runs the saved flow (async: the answer is a processId at once) and follows its live stream:
 * each node's state goes to the canvas as its events arrive.
 */
export function RunPanel({ flowId, dirty, onNodes }: { flowId: string; dirty: boolean; onNodes: (nodes: RunNodes) => void }) {
  const [inputs, setInputs] = useState('{\n  "name": "Ada"\n}');
  const [processId, setProcessId] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const stop = useRef<(() => void) | null>(null);
  useEffect(() => () => stop.current?.(), []);

  const start = useAction(async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(inputs || '{}');
    } catch {
      throw new Error('The inputs are not valid JSON.');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('The inputs must be a JSON object, e.g. {"name": "Ada"}.');
    stop.current?.();
    const reply = await call(api().POST('/flows/{flowId}/run', { params: { path: { flowId } }, body: { inputs: parsed as Record<string, never>, async: true } }));
    const id = (reply as { processId: string }).processId;
    let nodes: RunNodes = {};
    onNodes(nodes);
    setProcessId(id);
    setStatus('queued');
    setFailure(null);
    stop.current = follow(
      `/processes/${encodeURIComponent(id)}/stream`,
      (frame) => {
        const event = frame.data as { type?: string; data?: Record<string, unknown> };
        if (!event || typeof event !== 'object') return;
        if (event.type === 'RunStarted') setStatus('running');
        if (event.type && FINAL[event.type]) {
          setStatus(FINAL[event.type]);
          // RunFailed carries {code, reason, nodeId} itself.
          const d = event.data ?? {};
          if (typeof d.reason === 'string') setFailure(`${d.reason}${typeof d.code === 'string' ? ` (${d.code})` : ''}`);
        }
        const next = applyRunEvent(nodes, event);
        if (next !== nodes) onNodes((nodes = next));
      },
      (err) => err && setFailure(`The live stream stopped: ${err.message}`),
    );
  });

  return (
    <section className="card flows-run" aria-labelledby="run-title">
      <h2 id="run-title">Run</h2>
      <label className="field">
        <span className="field-label">Inputs (JSON)</span>
        <textarea value={inputs} onChange={(e) => setInputs(e.target.value)} spellCheck={false} />
      </label>
      <button type="button" onClick={() => void start.run()} disabled={start.pending || dirty}>
        Run
      </button>
      {dirty ? <span className="muted flows-hint"> Save first: a run uses the saved flow.</span> : null}
      <ErrorNote error={start.error} />
      {processId ? (
        <p role="status" className="flows-run-status">
          Run <span className={`status status-${status}`}>{status}</span> · <Link href={`/runs/${processId}`}>open the run</Link>
          {failure ? <span className="error flows-run-failure">{failure}</span> : null}
        </p>
      ) : null}
    </section>
  );
}
