import { z } from 'zod';
import { setTelemetryOrgSettings, telemetryOrgSettings } from '../../commands/telemetry.js';
import { telemetrySettingsStreamId } from '../../domain/telemetry/index.js';
import { defineRoute } from '../route.js';
import { orgParams } from './orgs-schemas.js';

/** An organization's tracing settings: whether its prompts and completions may be recorded on spans (README, "Tracing"). */
const tag = 'Organizations';

const settingsBody = z.strictObject({
  recordContent: z
    .boolean()
    .optional()
    .describe('record the prompts and completions of this organization’s LLM calls on trace spans (gen_ai.input.messages / gen_ai.output.messages); off by default'),
});
const settingsReply = z.object({ orgId: z.string(), recordContent: z.boolean() });

export const telemetryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/telemetry-settings',
    operationId: 'getOrganizationTelemetrySettings',
    summary: "the organization's tracing settings",
    tag,
    auth: 'bearer',
    permission: 'view_resources',
    params: orgParams,
    responses: {
      200: { description: 'the settings (defaults when never set)', schema: settingsReply },
      403: { description: 'not a member of the organization' },
      404: { description: 'no such organization' },
    },
    async handler({ params, services }) {
      const state = await telemetryOrgSettings(services.eventStore, params.orgId);
      return { status: 200, body: { orgId: params.orgId, recordContent: state.recordContent } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/orgs/{orgId}/telemetry-settings',
    operationId: 'setOrganizationTelemetrySettings',
    summary: "whether the organization's prompts and completions may be recorded on trace spans",
    tag,
    auth: 'bearer',
    permission: 'manage_settings',
    params: orgParams,
    body: settingsBody,
    responses: {
      200: { description: 'the settings now', schema: settingsReply },
      400: { description: 'invalid body (VALIDATION_FAILED)' },
      403: { description: 'role lacks manage_settings' },
      404: { description: 'no such organization' },
    },
    async handler({ params, body, principal, services, command, settle }) {
      const result = await setTelemetryOrgSettings(services.eventStore, command, params.orgId, principal!.userId, body);
      await settle(result.position, telemetrySettingsStreamId(params.orgId));
      return { status: 200, body: { orgId: params.orgId, recordContent: result.state.recordContent } };
    },
  }),
];
