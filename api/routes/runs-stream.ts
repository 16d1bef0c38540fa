import { z } from 'zod';
import { idSchema, maskFlowEventSecrets } from '../../domain/flows/index.js';
import { runStreamId } from '../../domain/runs/index.js';
import { serveLogStream } from '../log-stream.js';
import { defineRoute } from '../route.js';
import { readErrors } from './flows-schemas.js';
import { visibleRun } from './runs.js';

/** The events that end a run's stream (a pruned run's stream starts with its summary, final too). */
export const FINAL_RUN_EVENTS: ReadonlySet<string> = new Set(['RunCompleted', 'RunFailed', 'RunStopped', 'RunTimedOut', 'RunHistoryPruned']);

/** A run live (issue 34 item 4): GET /processes/{processId}/events as it happens. */
export const runStreamRoutes = [
  defineRoute({
    method: 'GET',
    path: '/processes/{processId}/stream',
    operationId: 'streamProcess',
    summary:
      "a run's events live as Server-Sent Events: every event of the run (run.requested, run.started, node.started, node.completed, node.failed, node.skipped, …, ending with run.completed, run.failed, run.stopped or run.timed_out), id = the event's revision; Last-Event-ID (or ?lastEventId=) resumes after it from the log",
    tag: 'Processing',
    auth: 'bearer',
    permission: 'view_resources',
    params: z.strictObject({ processId: idSchema }),
    query: z.strictObject({ lastEventId: z.string().optional().describe('the last id received, when the client cannot send Last-Event-ID') }),
    responses: {
      200: { description: 'text/event-stream; each frame\'s data is {type, revision, data, actorId, occurredAt} as GET /processes/{processId}/events lists it; ping every 15 s without id' },
      ...readErrors,
      400: { description: 'VALIDATION_FAILED: Last-Event-ID is not a revision' },
      404: { description: "PROCESS_NOT_FOUND (unknown or another tenant's)" },
    },
    async handler(input) {
      await visibleRun(input, input.params.processId);
      return serveLogStream(input, {
        streamId: runStreamId(input.params.processId),
        final: FINAL_RUN_EVENTS,
        // RunRequested snapshots the nodes: their secrets show masked, as in every read.
        dataOf: (e) => ({ type: e.type, revision: e.revision, data: maskFlowEventSecrets(e.type, e.data), actorId: e.metadata.actorId, occurredAt: e.metadata.occurredAt }),
      });
    },
  }),
];
