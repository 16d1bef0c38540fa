import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Field, useAction, useLoad } from '../ui';
import { parseJson } from './json';
import type { WorkflowView } from './types';

/** Starts a workflow of a flow (POST /workflows) with a JSON input, then opens it. */
export function StartWorkflow() {
  const [, navigate] = useLocation();
  const [open, setOpen] = useState(false);
  const [flowId, setFlowId] = useState('');
  const [input, setInput] = useState('{}');
  const flows = useLoad(() => (open ? call(api().GET('/flows', { params: { query: { limit: 100 } } })) : Promise.resolve(undefined)), [open]);
  const start = useAction(async () => {
    const body = { flowId, input: parseJson(input, 'Input') as never };
    const created = (await call(api().POST('/workflows', { body }))) as unknown as { workflow: WorkflowView };
    navigate(`/workflows/${created.workflow.id}`);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void start.run();
  };
  if (!open)
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          Start a workflow
        </button>
      </p>
    );
  return (
    <form className="card wf-card" onSubmit={submit} aria-labelledby="start-workflow">
      <h2 id="start-workflow">Start a workflow</h2>
      <ErrorNote error={flows.error} />
      <Field label="Flow to run">
        <select value={flowId} onChange={(e) => setFlowId(e.target.value)} required>
          <option value="">Choose a flow…</option>
          {(flows.data?.items ?? []).map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Input (JSON)">
        <textarea value={input} onChange={(e) => setInput(e.target.value)} rows={3} />
      </Field>
      <ErrorNote error={start.error} />
      <div className="wf-buttons">
        <button type="submit" disabled={start.pending || !flowId}>
          Start
        </button>
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          Close
        </button>
      </div>
    </form>
  );
}
