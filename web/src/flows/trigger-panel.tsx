import { useState } from 'react';
import { api, call } from '../session';
import { ErrorNote, formatTime, useAction } from '../ui';
import { versionOfEtag, type TriggerView } from './api';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

/** The flow's public trigger: on or off, which methods, and its key (shown once, when made). */
export function TriggerPanel({ flowId, trigger, onWritten }: { flowId: string; trigger: TriggerView; onWritten: (version: number | null, trigger: TriggerView) => void }) {
  const [enabled, setEnabled] = useState(trigger.enabled);
  const [methods, setMethods] = useState<Method[]>(trigger.allowedMethods as Method[]);
  const [key, setKey] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  const save = useAction(async () => {
    setSaved(false);
    const { data, error, response } = await api().PUT('/flows/{flowId}/trigger', { params: { path: { flowId } }, body: { enabled, allowedMethods: methods } });
    const body = await call(Promise.resolve({ data, error, response }));
    onWritten(versionOfEtag(response), body.trigger);
    setSaved(true);
  });
  const regenerate = useAction(async () => {
    const { data, error, response } = await api().POST('/flows/{flowId}/trigger/regenerate-key', { params: { path: { flowId } } });
    const body = await call(Promise.resolve({ data, error, response }));
    setKey(body.key);
    onWritten(versionOfEtag(response), { ...trigger, hasKey: true, keyCreatedAt: body.keyCreatedAt });
  });
  const toggle = (m: Method, on: boolean) => setMethods((old) => (on ? [...old, m] : old.filter((x) => x !== m)));

  return (
    <section className="card flows-trigger" aria-labelledby="trigger-title">
      <h2 id="trigger-title">Trigger</h2>
      <label className="field flows-check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <span>Trigger enabled (the flow runs when its trigger URL is called with the key)</span>
      </label>
      <fieldset className="flows-methods">
        <legend>Allowed methods</legend>
        {METHODS.map((m) => (
          <label key={m} className="flows-check">
            <input type="checkbox" checked={methods.includes(m)} onChange={(e) => toggle(m, e.target.checked)} />
            <span>{m}</span>
          </label>
        ))}
      </fieldset>
      <button type="button" onClick={() => void save.run()} disabled={save.pending || methods.length === 0}>
        Save trigger settings
      </button>
      {saved ? <span role="status"> Trigger settings saved.</span> : null}
      <ErrorNote error={save.error} />
      <p className="muted">{trigger.hasKey ? `A key exists (made ${formatTime(trigger.keyCreatedAt)}).` : 'No key yet.'}</p>
      <button type="button" className="secondary" onClick={() => void regenerate.run()} disabled={regenerate.pending}>
        {trigger.hasKey ? 'Regenerate key' : 'Make a key'}
      </button>
      <ErrorNote error={regenerate.error} />
      {key ? (
        <div className="notice flows-key" role="status">
          <p>The new key, shown only now (the old one stopped working):</p>
          <code className="flows-key-value" data-testid="trigger-key">{key}</code>
        </div>
      ) : null}
    </section>
  );
}
