import { useEffect, useRef, useState } from 'react';
import { ErrorNote, formatTime } from '../ui';
import { eventOfVersion, flowAtVersion, type AuditEvent, type Flow } from './api';

/** Which version is on show (null: now, editable) and, for a past one, the flow as it was then. */
export function useTimeTravel(flowId: string, current: number) {
  const [at, setAt] = useState<number | null>(null);
  const [past, setPast] = useState<Flow | null>(null);
  const [event, setEvent] = useState<AuditEvent | null>(null);
  const [error, setError] = useState<unknown>(null);
  const generation = useRef(0);
  const shown = at ?? current;
  useEffect(() => {
    const mine = ++generation.current;
    setError(null);
    // Moving the slider quickly asks for many versions: only the last answer is shown.
    void Promise.all([at === null ? Promise.resolve(null) : flowAtVersion(flowId, at), eventOfVersion(flowId, shown)]).then(
      ([flow, ev]) => {
        if (mine !== generation.current) return;
        setPast(flow);
        setEvent(ev);
      },
      (err) => mine === generation.current && setError(err),
    );
  }, [flowId, at, shown]);
  const goTo = (version: number | null) => setAt(version === null || version >= current ? null : version);
  return { at, shown, past: at === null ? null : past, event, error, goTo };
}

export type TimeTravel = ReturnType<typeof useTimeTravel>;

/** The slider over the flow's versions, the event that made the one on show, and the way back. */
export function TimeTravelBar({ me, travel, current, dirty, onRestore }: { me: string | null; travel: TimeTravel; current: number; dirty: boolean; onRestore: (version: number) => void }) {
  const { at, shown, event } = travel;
  return (
    <section className="card flows-travel" aria-labelledby="travel-title">
      <h2 id="travel-title">Time travel</h2>
      <div className="flows-travel-row">
        <label className="field flows-travel-slider">
          <span className="field-label">Version</span>
          <input
            type="range"
            min={0}
            max={current}
            step={1}
            value={shown}
            disabled={dirty || current === 0}
            aria-valuetext={`version ${shown} of ${current}${at === null ? ' (now)' : ''}`}
            onChange={(e) => travel.goTo(Number(e.target.value))}
          />
        </label>
        <output className="flows-travel-at" aria-live="polite">
          {at === null ? `Version ${shown} (now)` : `Version ${shown} of ${current} (read only)`}
        </output>
        {at !== null ? (
          <>
            <button type="button" className="secondary" onClick={() => travel.goTo(null)}>
              Back to now
            </button>
            <button type="button" onClick={() => onRestore(at)}>
              Restore this version
            </button>
          </>
        ) : null}
      </div>
      {dirty ? <p className="muted flows-hint">Save or discard your changes to travel in time.</p> : null}
      {event ? (
        <p className="flows-travel-event" data-testid="version-event">
          Made by <strong className="flows-event-type">{event.type}</strong>
          {typeof (event.data as { restoredFrom?: unknown } | null)?.restoredFrom === 'number' ? ` (restored from version ${(event.data as { restoredFrom: number }).restoredFrom})` : null} · by <span title={event.actorId ?? undefined}>{event.actorId === null ? 'the service' : event.actorId === me ? 'you' : <code>{event.actorId}</code>}</span> · {formatTime(event.at)}
        </p>
      ) : null}
      <ErrorNote error={travel.error} />
    </section>
  );
}
