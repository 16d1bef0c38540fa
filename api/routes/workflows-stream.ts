import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { requireWorkflow } from '../../commands/workflows.js';
import { idSchema } from '../../domain/flows/index.js';
import { workflowStreamId } from '../../domain/workflows/index.js';
import { serveLogStream } from '../log-stream.js';
import { defineRoute } from '../route.js';
import { readErrors } from './flows-schemas.js';

/** The events after which a workflow execution's stream has nothing more (continuing as new names the next execution). */
export const FINAL_WORKFLOW_EVENTS: ReadonlySet<string> = new Set(['WorkflowCompleted', 'WorkflowFailed', 'WorkflowTimedOut', 'WorkflowCanceled', 'WorkflowTerminated', 'WorkflowContinuedAsNew']);

/** A workflow live (issue 34 item 4): its history as it happens. */
export const workflowStreamRoutes = [
  defineRoute({
    method: 'GET',
    path: '/workflows/{workflowId}/stream',
    operationId: 'streamWorkflow',
    summary:
      "a workflow execution's events live as Server-Sent Events (workflow.created, workflow.started, workflow.node_started, workflow.node_completed, signal.received, …, ending with workflow.completed, workflow.failed, workflow.timed_out, workflow.canceled, workflow.terminated or workflow.continued_as_new), id = the event's revision (the history's eventId); Last-Event-ID (or ?lastEventId=) resumes after it",
    tag: 'Queries',
    auth: 'bearer',
    permission: 'view_resources',
    params: z.strictObject({ workflowId: idSchema }),
    query: z.strictObject({ lastEventId: z.string().optional().describe('the last id received, when the client cannot send Last-Event-ID') }),
    responses: {
      200: { description: "text/event-stream; each frame's data is {eventId, type, data, occurredAt, actorId} as GET /workflows/{workflowId}/history lists it; ping every 15 s without id" },
      ...readErrors,
      400: { description: 'VALIDATION_FAILED: Last-Event-ID is not a revision' },
      404: { description: "WORKFLOW_NOT_FOUND (unknown or another tenant's)" },
    },
    async handler(input) {
      await requireWorkflow(input.services.eventStore, input.params.workflowId, flowScopeOf(input.principal!));
      return serveLogStream(input, {
        streamId: workflowStreamId(input.params.workflowId),
        final: FINAL_WORKFLOW_EVENTS,
        dataOf: (e) => ({ eventId: e.revision, type: e.type, data: e.data, occurredAt: e.metadata.occurredAt, actorId: e.metadata.actorId }),
      });
    },
  }),
];
