import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Field, Page, formatTime, useAction } from '../ui';
import type { FlowSummary } from './api';
import { FlowRow } from './list-row';
import './flows.css';

const PAGE_SIZE = 20;

/** The caller's flows, most recently updated first, a page at a time; create, rename, delete. */
export function FlowsPage() {
  const [items, setItems] = useState<FlowSummary[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<FlowSummary | null>(null);

  const loadPage = useAction(
    useCallback(async (from: string | null) => {
      const page = await call(api().GET('/flows', { params: { query: { limit: PAGE_SIZE, ...(from ? { cursor: from } : {}) } } }));
      setItems((old) => (from && old ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
    }, []),
  );
  const { run: loadFirst } = loadPage;
  useEffect(() => {
    void loadFirst(null);
  }, [loadFirst]);

  const create = useAction(
    useCallback(async (flowName: string) => {
      const { flow } = await call(api().POST('/flows', { body: { name: flowName } }));
      const summary: FlowSummary = { ...flow, nodeCount: flow.nodes.length, edgeCount: flow.edges.length };
      setItems((old) => [summary, ...(old ?? [])]);
      setCreated(summary);
      setName('');
    }, []),
  );
  const onCreate = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim()) void create.run(name.trim());
  };

  return (
    <Page title="Flows">
      <form className="card flows-create" onSubmit={onCreate} aria-label="New flow">
        <Field label="New flow name">
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        </Field>
        <button type="submit" disabled={create.pending}>
          Create flow
        </button>
        <ErrorNote error={create.error} />
        {created ? (
          <p className="notice" role="status">
            Created <Link href={`/flows/${created.id}`}>{created.name}</Link>.
          </p>
        ) : null}
      </form>
      <ErrorNote error={loadPage.error} />
      {items === null ? (
        <p className="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p className="muted">No flows yet: name one above to start.</p>
      ) : (
        <div className="table-wrap">
          <table className="list">
            <caption className="flows-sr">Your flows</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Nodes</th>
                <th scope="col">Version</th>
                <th scope="col">Updated</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {items.map((flow) => (
                <FlowRow
                  key={flow.id}
                  flow={flow}
                  updated={formatTime(flow.updatedAt)}
                  onChanged={(next) => setItems((old) => (old ?? []).map((f) => (f.id === next.id ? { ...f, ...next } : f)))}
                  onDeleted={() => setItems((old) => (old ?? []).filter((f) => f.id !== flow.id))}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor ? (
        <button type="button" className="secondary flows-more" disabled={loadPage.pending} onClick={() => void loadPage.run(cursor)}>
          Load more flows
        </button>
      ) : null}
    </Page>
  );
}
