import { useState } from 'react';
import { api, call } from '../session';
import { ErrorNote, formatTime, useLoad } from '../ui';

/** The run's event log (GET /processes/{id}/events), read only when a person opens it. */
interface RunEvent {
  type: string;
  revision: number;
  data: Record<string, unknown>;
  occurredAt: string;
}

export function RunEvents({ processId }: { processId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="card run-card run-events" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Event log</summary>
      {open ? <EventList processId={processId} /> : null}
    </details>
  );
}

function EventList({ processId }: { processId: string }) {
  const events = useLoad(
    async () => (await call(api().GET('/processes/{processId}/events', { params: { path: { processId }, query: { limit: 100 } } }))) as unknown as { events: RunEvent[]; nextCursor: string | null },
    [processId],
  );
  if (events.error) return <ErrorNote error={events.error} />;
  if (!events.data) return <p>Loading…</p>;
  return (
    <div className="table-wrap">
      <table className="list" aria-label="Event log">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Event</th>
            <th scope="col">When</th>
            <th scope="col">Node</th>
          </tr>
        </thead>
        <tbody>
          {events.data.events.map((e) => (
            <tr key={e.revision} data-type={e.type}>
              <td>{e.revision}</td>
              <td>{e.type}</td>
              <td>{formatTime(e.occurredAt)}</td>
              <td>{typeof e.data?.nodeId === 'string' ? e.data.nodeId : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {events.data.nextCursor ? <p className="muted">The first 100 events are shown.</p> : null}
    </div>
  );
}
