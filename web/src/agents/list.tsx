import { Link } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Page, formatTime, useLoad } from '../ui';
import './agents.css';

/** /agents: the agents of the user or the organization's workspace, most recently changed first. */
export function AgentsPage() {
  const agents = useLoad(() => call(api().GET('/agents', { params: { query: { limit: 100 } } })), []);
  const items = agents.data?.items ?? [];
  return (
    <Page title="Agents">
      <ErrorNote error={agents.error} />
      {agents.data && items.length === 0 ? (
        <p className="muted">
          No agent yet. Agents are created through the API (<code>POST /api/agents</code>) or <code>flowctl</code>.
        </p>
      ) : null}
      {items.length > 0 ? (
        <div className="table-wrap">
          <table className="list" aria-label="Agents">
            <thead>
              <tr>
                <th scope="col">Agent</th>
                <th scope="col">Model</th>
                <th scope="col">Tools</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {items.map((a) => (
                <tr key={a.id}>
                  <td>
                    <Link href={`/agents/${a.id}`}>{a.name}</Link>
                    {a.description ? <div className="muted">{a.description}</div> : null}
                  </td>
                  <td>
                    {a.provider} / {a.model}
                  </td>
                  <td>{a.tools.length}</td>
                  <td>{formatTime(a.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {agents.data?.nextCursor ? <p className="muted">Showing the first 100 agents.</p> : null}
    </Page>
  );
}
