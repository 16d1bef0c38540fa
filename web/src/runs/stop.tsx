import { api, call } from '../session';
import { ErrorNote, useAction } from '../ui';
import type { ProcessView } from './types';

/**
 * "Stop run" on a run that is not over (POST /processes/{processId}/stop): a queued run stops at
 * once; a running one stops when its worker has aborted what is in flight, which the page's live
 * stream then shows.
 */
export function StopRun({ processId, onStopped }: { processId: string; onStopped: (view: ProcessView) => void }) {
  const stop = useAction(async () => {
    const answer = (await call(api().POST('/processes/{processId}/stop', { params: { path: { processId } } }))) as unknown as { process: ProcessView };
    onStopped(answer.process);
  });
  return (
    <>
      <button type="button" className="danger" disabled={stop.pending} onClick={() => void stop.run()}>
        {stop.pending ? 'Stopping…' : 'Stop run'}
      </button>
      <ErrorNote error={stop.error} />
    </>
  );
}
