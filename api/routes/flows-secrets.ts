import { z } from 'zod';
import { resealFlowSecrets } from '../../commands/flows-secrets.js';
import { defineRoute } from '../route.js';
import { requireOperator } from './operations.js';

/**
 * The operators' repair of node secrets written in clear before sealing existed (README
 * "Security"): commands/flows-secrets.ts says what it does on each event store.
 */
const resealedFlow = z.object({
  flowId: z.string(),
  clearEvents: z.number().int().describe('events of the flow that held a node secret in clear'),
  rewrittenEvents: z.number().int().describe('of those, re-written in place with the secrets sealed (0 on EventStoreDB)'),
  revision: z.number().int().describe('revision of the FlowSecretsResealed event appended'),
});

export const flowSecretsAdminRoutes = [
  defineRoute({
    method: 'POST',
    path: '/admin/flows/secrets/reseal',
    operationId: 'resealFlowSecrets',
    summary:
      'seal node secrets (webhook header values, {"$secret": …} variables) that older events hold in clear: re-writes those events (and run snapshots) in place on SQLite (EventStoreDB is append-only: they stay, reads mask them) and appends FlowSecretsResealed to each affected flow (operators only; repeating it finds nothing new)',
    tag: 'Audit and replay',
    auth: 'bearer',
    permission: 'manage_settings',
    responses: {
      200: {
        description: 'what was found and done',
        schema: z.object({
          success: z.literal(true),
          adapter: z.string(),
          rewritesInPlace: z.boolean(),
          scannedEvents: z.number().int(),
          flows: z.array(resealedFlow),
          runs: z.object({ streams: z.number().int(), clearEvents: z.number().int(), rewrittenEvents: z.number().int() }).describe('run snapshots (RunRequested) that held node secrets in clear'),
        }),
      },
      403: { description: 'OPERATOR_ONLY: not listed in ADMIN_EMAILS' },
    },
    async handler(input) {
      await requireOperator(input);
      const { services, command } = input;
      const report = await resealFlowSecrets({ eventStore: services.eventStore, storedEvents: services.storedEvents, sealer: services.sealedBox }, command);
      const last = report.flows[report.flows.length - 1];
      if (last) await input.settle(report.position, `flow-${last.flowId}`);
      const { position: _position, ...answer } = report;
      return { status: 200, body: { success: true, ...answer } };
    },
  }),
];
