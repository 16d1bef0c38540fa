import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import { follow } from '../live';
import { JsonValue, StatusBadge } from '../runs/status';
import { ConsoleError, api, call } from '../session';
import { ErrorNote, Page, formatTime, useLoad } from '../ui';
import { Controls, QueryForm, SignalForm } from './controls';
import { History } from './history';
import { isFinalWorkflow, type HistoryEvent, type WorkflowView } from './types';
import './workflows.css';

/**
 * /workflows/:workflowId: the workflow folded from its log, its history, and what a person can do
 * to it (signal, pause, resume, cancel, query). While it is not final its live stream appends to
 * the history and each new event reads the workflow again (its status, what it waits on).
 */
export function WorkflowPage({ params }: { params: Record<string, string | undefined> }) {
  const workflowId = params.workflowId ?? '';
  const path = { workflowId };
  const workflow = useLoad(async () => ((await call(api().GET('/workflows/{workflowId}', { params: { path } }))) as unknown as { workflow: WorkflowView }).workflow, [workflowId]);
  const [events, setEvents] = useState<HistoryEvent[] | null>(null);
  const [historyError, setHistoryError] = useState<unknown>(null);
  const [live, setLive] = useState<'off' | 'on' | 'lost'>('off');

  useEffect(() => {
    let stop: (() => void) | null = null;
    let cancelled = false;
    setEvents(null);
    // The history first, then the live stream from its last event on: nothing missed, nothing twice.
    (async () => {
      try {
        const page = (await call(api().GET('/workflows/{workflowId}/history', { params: { path, query: { limit: 1000 } } }))) as unknown as { events: HistoryEvent[]; lastEventId: number };
        if (cancelled) return;
        setEvents(page.events);
        if (page.events.some((e) => FINAL_EVENT.test(e.type))) return;
        setLive('on');
        stop = follow(
          `/workflows/${encodeURIComponent(workflowId)}/stream?lastEventId=${page.lastEventId}`,
          (frame) => {
            const event = frame.data as HistoryEvent | null;
            if (!event || typeof event.eventId !== 'number') return; // a ping
            setEvents((old) => (old && !old.some((e) => e.eventId === event.eventId) ? [...old, event] : old));
            workflow.reload();
          },
          (error) => setLive(error ? 'lost' : 'off'),
        );
      } catch (err) {
        if (!cancelled) setHistoryError(err);
      }
    })();
    return () => {
      cancelled = true;
      stop?.();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [workflowId]);

  const w = workflow.data;
  return (
    <Page title={`Workflow ${shortId(workflowId)}`} actions={<Link href="/workflows">All workflows</Link>}>
      <ErrorNote error={workflow.error} />
      {w ? (
        <>
          <section className="card wf-card" aria-label="Summary">
            <dl className="wf-summary">
              <div>
                <dt>Workflow</dt>
                <dd>
                  <code>{w.id}</code>
                </dd>
              </div>
              <div>
                <dt>Status</dt>
                <dd data-testid="workflow-status" data-status={w.status}>
                  <StatusBadge status={w.status} />
                  {w.cancelRequested && !isFinalWorkflow(w.status) ? <span className="muted"> (cancel requested)</span> : null}
                </dd>
              </div>
              <div>
                <dt>Waiting on</dt>
                <dd>{w.waitingOn ? `${w.waitingOn.kind} "${w.waitingOn.name}" (node ${w.waitingOn.nodeId})` : '—'}</dd>
              </div>
              <div>
                <dt>Flow</dt>
                <dd>
                  <Link href={`/flows/${w.flowId}`}>Open the flow's canvas</Link>
                </dd>
              </div>
              <div>
                <dt>Created</dt>
                <dd>{formatTime(w.createdAt)}</dd>
              </div>
              <div>
                <dt>Closed</dt>
                <dd>{formatTime(w.closedAt)}</dd>
              </div>
              {w.continuedAs ? (
                <div>
                  <dt>Continued as</dt>
                  <dd>
                    <Link href={`/workflows/${w.continuedAs}`}>{w.continuedAs}</Link>
                  </dd>
                </div>
              ) : null}
            </dl>
            <p className="muted live-note" aria-live="polite">
              {live === 'on' ? 'Live: the history grows as the workflow goes.' : live === 'lost' ? 'The live stream was lost; reload to see the latest.' : ''}
            </p>
            {w.error ? <ErrorNote error={new ConsoleError({ code: w.error.code ?? 'WORKFLOW_FAILED', message: w.error.message ?? 'the workflow failed' }, 200)} /> : null}
            {'result' in w ? (
              <>
                <h2>Result</h2>
                <JsonValue value={w.result} label="Result" />
              </>
            ) : null}
          </section>
          <Controls workflow={w} onChanged={workflow.reload} />
          <div className="wf-forms">
            <SignalForm workflow={w} onSent={workflow.reload} />
            <QueryForm workflowId={w.id} />
          </div>
          <section className="card wf-card" aria-labelledby="wf-state">
            <h2 id="wf-state">State</h2>
            <JsonValue value={w.state} label="State" />
            {w.pendingSignals.length > 0 ? (
              <p>
                Pending signals: {w.pendingSignals.map((s) => s.name).join(', ')}
              </p>
            ) : null}
          </section>
        </>
      ) : null}
      <ErrorNote error={historyError} />
      {events ? <History events={events} /> : null}
    </Page>
  );
}

const FINAL_EVENT = /^Workflow(Completed|Failed|TimedOut|Canceled|Terminated|ContinuedAsNew)$/;

/** The heading keeps an id a phone can show: generated ids are long (wf_ + a UUID); the summary shows it whole. */
const shortId = (id: string) => (id.length > 24 ? `${id.slice(0, 20)}…` : id);
