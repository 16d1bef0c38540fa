import { z } from 'zod';
import { loadRun, requestStop } from '../../commands/runs.js';
import { idSchema } from '../../domain/flows/index.js';
import { runStreamId } from '../../domain/runs/index.js';
import { runStateView } from '../../projections/runs.js';
import { defineRoute } from '../route.js';
import { readErrors } from './flows-schemas.js';
import { visibleRun } from './runs.js';

/**
 * Stops one run (POST /flows/{flowId}/stop stops all of a flow's): a queued run stops at once; a
 * running one is marked stop-requested, and its worker aborts what is in flight and confirms (the
 * run's stream then ends with RunStopped). Asking again while the stop is pending changes nothing.
 */
export const runStopRoutes = [
  defineRoute({
    method: 'POST',
    path: '/processes/{processId}/stop',
    operationId: 'stopProcess',
    summary: 'stop one queued or running process: stopped at once when queued, else when its worker has aborted what is in flight (follow GET /processes/{processId}/stream)',
    tag: 'Processing',
    auth: 'bearer',
    permission: 'edit_resources',
    params: z.strictObject({ processId: idSchema }),
    responses: {
      200: { description: '{success, process}: the run after the request (status stopped, or stopRequested while its worker winds down)', schema: z.looseObject({ success: z.literal(true), process: z.looseObject({ processId: z.string(), status: z.string() }) }) },
      ...readErrors,
      404: { description: "PROCESS_NOT_FOUND (unknown or another tenant's run)" },
      409: { description: 'RUN_ALREADY_FINISHED: the run completed, failed, stopped or timed out before the request (details.status)' },
    },
    async handler(input) {
      const { params, principal, services } = input;
      await visibleRun(input, params.processId);
      const result = await requestStop(services.eventStore, input.command, params.processId, principal!.userId);
      await input.settle(result.position, runStreamId(params.processId));
      const after = await loadRun(services.eventStore, params.processId);
      return { status: 200, body: { success: true, process: runStateView(params.processId, after) } };
    },
  }),
];
