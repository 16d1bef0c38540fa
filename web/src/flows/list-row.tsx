import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, useAction } from '../ui';
import type { FlowSummary } from './api';

/** One flow of the list, renamed in place and deleted after a confirmation. */
export function FlowRow({ flow, updated, onChanged, onDeleted }: { flow: FlowSummary; updated: string; onChanged: (f: Partial<FlowSummary> & { id: string }) => void; onDeleted: () => void }) {
  const [mode, setMode] = useState<'view' | 'rename' | 'confirm-delete'>('view');
  const [name, setName] = useState(flow.name);
  const rename = useAction(async (next: string) => {
    const { flow: renamed } = await call(api().PATCH('/flows/{flowId}/name', { params: { path: { flowId: flow.id } }, body: { name: next } }));
    onChanged({ id: flow.id, name: renamed.name, version: renamed.version, updatedAt: renamed.updatedAt });
    setMode('view');
  });
  const remove = useAction(async () => {
    await call(api().DELETE('/flows/{flowId}', { params: { path: { flowId: flow.id } } }));
    onDeleted();
  });
  const onRename = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim()) void rename.run(name.trim());
  };

  return (
    <tr>
      <td>
        {mode === 'rename' ? (
          <form onSubmit={onRename} className="flows-inline">
            <label className="flows-sr" htmlFor={`rename-${flow.id}`}>
              New name for {flow.name}
            </label>
            <input id={`rename-${flow.id}`} value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required autoFocus />
            <button type="submit" disabled={rename.pending}>
              Save name
            </button>
            <button type="button" className="secondary" onClick={() => setMode('view')}>
              Cancel
            </button>
          </form>
        ) : (
          <Link href={`/flows/${flow.id}`}>{flow.name}</Link>
        )}
        <ErrorNote error={rename.error ?? remove.error} />
      </td>
      <td>{flow.nodeCount}</td>
      <td>{flow.version}</td>
      <td>{updated}</td>
      <td>
        {mode === 'confirm-delete' ? (
          <span className="flows-inline" role="group" aria-label={`Confirm deleting ${flow.name}`}>
            <span>Delete “{flow.name}”?</span>
            <button type="button" className="danger" disabled={remove.pending} onClick={() => void remove.run()}>
              Yes, delete
            </button>
            {/* Focus lands on the safe choice: Enter right after "Delete" keeps the flow. */}
            <button type="button" className="secondary" onClick={() => setMode('view')} autoFocus>
              Keep it
            </button>
          </span>
        ) : (
          <span className="flows-inline">
            <button type="button" className="secondary" aria-label={`Rename ${flow.name}`} onClick={() => setMode('rename')}>
              Rename
            </button>
            <button type="button" className="danger" aria-label={`Delete ${flow.name}`} onClick={() => setMode('confirm-delete')}>
              Delete
            </button>
          </span>
        )}
      </td>
    </tr>
  );
}
