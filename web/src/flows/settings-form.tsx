import { useEffect, useState } from 'react';
import type { JsonSchema, NodeTypeInfo } from './api';
import { settingsOf, type CanvasNode } from './model';

type Kind = 'text' | 'long-text' | 'number' | 'boolean' | 'choice' | 'json';

/** How a setting is edited, from its JSON Schema (`anyOf [x, null]` is x; anything nested is JSON). */
function kindOf(key: string, schema: JsonSchema): { kind: Kind; choices?: unknown[] } {
  const options = schema.anyOf?.filter((s) => s.type !== 'null') ?? [schema];
  const one = options.length === 1 ? options[0] : null;
  if (!one) return { kind: 'json' };
  if (one.enum) return { kind: 'choice', choices: one.enum };
  if (one.type === 'string') return { kind: /template|prompt|text|query|objective/i.test(key) ? 'long-text' : 'text' };
  if (one.type === 'number' || one.type === 'integer') return { kind: 'number' };
  if (one.type === 'boolean') return { kind: 'boolean' };
  return { kind: 'json' };
}

interface FormProps {
  node: CanvasNode;
  type: NodeTypeInfo | undefined;
  common: Set<string>;
  readOnly: boolean;
  onChange: (nodeId: string, data: Record<string, unknown>) => void;
}

/** The selected node's settings, as fields generated from its type's schema (GET /node-types). */
export function SettingsForm({ node, type, common, readOnly, onChange }: FormProps) {
  const set = (key: string, value: unknown) => {
    const data = { ...node.data };
    if (value === undefined) delete data[key];
    else data[key] = value;
    onChange(node.id, data);
  };
  const required = new Set(type?.dataSchema.required ?? []);
  const settings = type ? settingsOf(type, common) : [];
  return (
    <fieldset className="flows-settings" disabled={readOnly}>
      <legend>Settings of {String(node.data.agentName ?? node.id)}</legend>
      {type ? <p className="muted flows-hint">{type.description}</p> : <p className="muted">Unknown node type “{String(node.data.nodeType ?? '')}”.</p>}
      <label className="field">
        <span className="field-label">Name</span>
        <input value={String(node.data.agentName ?? '')} onChange={(e) => set('agentName', e.target.value || undefined)} maxLength={200} />
      </label>
      {settings.map(([key, schema]) => (
        <SettingField key={`${node.id}:${key}`} name={key} schema={schema} required={required.has(key)} value={node.data[key]} onChange={(v) => set(key, v)} />
      ))}
      <label className="field flows-check">
        <input type="checkbox" checked={node.data.startNode === true} onChange={(e) => set('startNode', e.target.checked ? true : undefined)} />
        <span>Start node (a run starts here)</span>
      </label>
    </fieldset>
  );
}

function SettingField({ name, schema, required, value, onChange }: { name: string; schema: JsonSchema; required: boolean; value: unknown; onChange: (v: unknown) => void }) {
  const { kind, choices } = kindOf(name, schema);
  const label = `${name}${required ? ' (required)' : ''}`;
  const hint = schema.description ?? schema.anyOf?.find((s) => s.description)?.description;
  const hintEl = hint ? <span className="field-hint">{hint}</span> : null;
  if (kind === 'boolean') {
    return (
      <label className="field flows-check">
        <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        <span>{label}</span>
        {hintEl}
      </label>
    );
  }
  if (kind === 'json') return <JsonField label={label} hint={hintEl} value={value} onChange={onChange} />;
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {kind === 'choice' ? (
        <select value={value === undefined || value === null ? '' : String(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : choices!.find((c) => String(c) === e.target.value))}>
          {required ? null : <option value="">(not set)</option>}
          {choices!.map((c) => (
            <option key={String(c)} value={String(c)}>
              {String(c)}
            </option>
          ))}
        </select>
      ) : kind === 'number' ? (
        <input type="number" value={typeof value === 'number' ? value : ''} min={schema.minimum} max={schema.maximum} onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))} />
      ) : kind === 'long-text' ? (
        <textarea value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value === '' && !required ? undefined : e.target.value)} />
      ) : (
        <input value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value === '' && !required ? undefined : e.target.value)} />
      )}
      {hintEl}
    </label>
  );
}

/** A nested setting as JSON text, taken when it parses (a half-typed object is not saved). */
function JsonField({ label, hint, value, onChange }: { label: string; hint: React.ReactNode; value: unknown; onChange: (v: unknown) => void }) {
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState(false);
  useEffect(() => setText(shown), [shown]);
  const commit = () => {
    if (text.trim() === '') return (setBad(false), onChange(undefined));
    try {
      onChange(JSON.parse(text));
      setBad(false);
    } catch {
      setBad(true);
    }
  };
  return (
    <label className="field">
      <span className="field-label">{label} (JSON)</span>
      <textarea value={text} onChange={(e) => setText(e.target.value)} onBlur={commit} aria-invalid={bad} />
      {bad ? <span className="error">Not valid JSON: not taken.</span> : null}
      {hint}
    </label>
  );
}
