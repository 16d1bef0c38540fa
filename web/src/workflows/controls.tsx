import { useState, type FormEvent } from 'react';
import { JsonValue } from '../runs/status';
import { api, call } from '../session';
import { ErrorNote, Field, useAction } from '../ui';
import { parseJson } from './json';
import { isFinalWorkflow, type WorkflowView } from './types';

/** Pause, resume and cancel: each offered only when the workflow's status allows it. */
export function Controls({ workflow, onChanged }: { workflow: WorkflowView; onChanged: () => void }) {
  const path = { workflowId: workflow.id };
  // Cancelling cannot be undone: a second, explicit button confirms it (no window.confirm, which a
  // keyboard or screen reader user meets out of context).
  const [confirming, setConfirming] = useState(false);
  const act = useAction(async (what: 'pause' | 'resume' | 'cancel') => {
    if (what === 'pause') await call(api().POST('/workflows/{workflowId}/pause', { params: { path }, body: {} }));
    else if (what === 'resume') await call(api().POST('/workflows/{workflowId}/resume', { params: { path }, body: {} }));
    else await call(api().POST('/workflows/{workflowId}/cancel', { params: { path }, body: { terminate: false } }));
    onChanged();
  });
  if (isFinalWorkflow(workflow.status)) return null;
  const paused = workflow.status === 'PAUSED';
  const created = workflow.status === 'CREATED';
  return (
    <section className="card wf-card" aria-labelledby="wf-controls">
      <h2 id="wf-controls">Controls</h2>
      <div className="wf-buttons">
        {!paused && !created ? (
          <button type="button" className="secondary" onClick={() => void act.run('pause')} disabled={act.pending}>
            Pause
          </button>
        ) : null}
        {paused || created ? (
          <button type="button" onClick={() => void act.run('resume')} disabled={act.pending}>
            {created ? 'Start' : 'Resume'}
          </button>
        ) : null}
        {confirming ? (
          <>
            <button type="button" className="danger" disabled={act.pending} onClick={() => void act.run('cancel').then(() => setConfirming(false))}>
              Yes, cancel it
            </button>
            <button type="button" className="secondary" onClick={() => setConfirming(false)}>
              Keep it running
            </button>
          </>
        ) : (
          <button type="button" className="danger" disabled={act.pending || workflow.cancelRequested} onClick={() => setConfirming(true)}>
            Cancel workflow
          </button>
        )}
      </div>
      <ErrorNote error={act.error} />
    </section>
  );
}

/** A signal by name with an optional JSON payload; the name the workflow waits on is offered first. */
export function SignalForm({ workflow, onSent }: { workflow: WorkflowView; onSent: () => void }) {
  // The signal the workflow waits for is the likely one: the name starts as it.
  const [name, setName] = useState(workflow.waitingOn?.kind === 'signal' ? workflow.waitingOn.name : '');
  const [payload, setPayload] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const send = useAction(async () => {
    const value = parseJson(payload, 'Payload');
    const body = { name, ...(value !== undefined ? { payload: value as never } : {}) };
    await call(api().POST('/workflows/{workflowId}/signal', { params: { path: { workflowId: workflow.id } }, body }));
    setSent(name);
    onSent();
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSent(null);
    void send.run();
  };
  if (isFinalWorkflow(workflow.status)) return null;
  const waitingFor = workflow.waitingOn?.kind === 'signal' ? workflow.waitingOn.name : null;
  return (
    <form className="card wf-card" onSubmit={submit} aria-labelledby="wf-signal">
      <h2 id="wf-signal">Send a signal</h2>
      <Field label="Signal name" hint={waitingFor ? `The workflow waits for "${waitingFor}".` : undefined}>
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </Field>
      <Field label="Payload (JSON)" hint="Optional.">
        <textarea value={payload} onChange={(e) => setPayload(e.target.value)} rows={3} />
      </Field>
      <ErrorNote error={send.error} />
      <button type="submit" disabled={send.pending || !name}>
        Send signal
      </button>
      {sent ? (
        <p className="notice" role="status">
          Signal "{sent}" recorded.
        </p>
      ) : null}
    </form>
  );
}

/** A query answered from the log: state, status, pendingSignals, a key of the state or a query node's name. */
export function QueryForm({ workflowId }: { workflowId: string }) {
  const [name, setName] = useState('state');
  const [answer, setAnswer] = useState<{ result: unknown } | null>(null);
  const ask = useAction(async () => {
    const res = (await call(api().POST('/workflows/{workflowId}/query', { params: { path: { workflowId } }, body: { name } }))) as unknown as { result: unknown };
    setAnswer({ result: res.result });
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void ask.run();
  };
  return (
    <form className="card wf-card" onSubmit={submit} aria-labelledby="wf-query">
      <h2 id="wf-query">Query</h2>
      <Field label="Query name" hint="state, status, pendingSignals, a key of the state, or a query node's name.">
        <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      </Field>
      <ErrorNote error={ask.error} />
      <button type="submit" className="secondary" disabled={ask.pending || !name}>
        Ask
      </button>
      {answer ? (
        <div role="status" aria-label="Query answer">
          <JsonValue value={answer.result ?? null} label="Query answer" />
        </div>
      ) : null}
    </form>
  );
}
