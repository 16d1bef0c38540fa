import { formatTime } from '../ui';

/** The workflow's events in order, the newest last, each with its data. */
export function History({ events }: { events: Array<{ eventId: number; type: string; data: Record<string, unknown>; occurredAt: string }> }) {
  return (
    <section className="card wf-card" aria-labelledby="wf-history">
      <h2 id="wf-history">History</h2>
      <div className="table-wrap">
        <table className="list wf-history" aria-labelledby="wf-history">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Event</th>
              <th scope="col">When</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {events.map((e) => (
              <tr key={e.eventId} data-type={e.type}>
                <td>{e.eventId}</td>
                <td>{e.type}</td>
                <td>{formatTime(e.occurredAt)}</td>
                <td>
                  <code className="wf-data">{summary(e.data)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The event's data on one line, without the timestamp the row already shows. */
function summary(data: Record<string, unknown>): string {
  const { at: _at, ...rest } = data ?? {};
  const text = JSON.stringify(rest);
  return text.length > 300 ? `${text.slice(0, 297)}…` : text;
}
