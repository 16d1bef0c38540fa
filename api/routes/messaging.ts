import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { deleteSession, initializeSession } from '../../commands/messaging.js';
import { PROVIDERS, msgSessionStreamId } from '../../domain/messaging/index.js';
import { listMessagingSessions } from '../../projections/messaging.js';
import type { RouteDef } from '../route.js';
import { defineRoute } from '../route.js';
import { messagingChatRoutes } from './messaging-chats.js';
import { auth, callerSession, errors, meOut, sessionOut, sessionParams, sessionView, settledSession, tag } from './messaging-support.js';
import { messagingProviderRoutes } from './messaging-waha.js';
import { pageQuery, pageReply } from './pagination.js';

/** Where WAHA should post its events: configured base, PUBLIC_URL, or the origin this request came to. */
export const WAHA_EVENTS_PATH = '/api/messaging/providers/waha/events';

const sessionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/messaging/sessions',
    operationId: 'createMessagingSession',
    summary: 'initialise a messaging session and start it (embedded: WORKING at once; waha: SCAN_QR_CODE with the QR)',
    tag,
    auth,
    permission: 'edit_resources',
    body: z.strictObject({
      name: z.string().trim().min(1).max(100),
      provider: z.enum(PROVIDERS).default('embedded'),
      config: z.strictObject({ pushName: z.string().trim().min(1).max(100).optional() }).optional(),
    }),
    responses: {
      201: { description: 'created; `status` as the provider answered (FAILED with `reason` when it could not be reached)', schema: z.object({ success: z.literal(true), session: sessionOut }) },
      400: { description: 'VALIDATION_FAILED or MESSAGING_PROVIDER_UNAVAILABLE (body.provider)' },
      401: errors[401],
      403: errors[403],
      409: { description: 'MESSAGING_SESSION_NAME_TAKEN' },
    },
    async handler(input) {
      const { body, services, command, principal, koa } = input;
      const provider = services.messaging.provider(body.provider);
      const base = (services.config.MESSAGING_CALLBACK_BASE_URL ?? services.config.PUBLIC_URL ?? `${koa.protocol}://${koa.host}`).replace(/\/+$/, '');
      const sessionId = services.newId();
      const result = await initializeSession(services.eventStore, command, provider, {
        sessionId,
        name: body.name,
        provider: body.provider,
        pushName: body.config?.pushName,
        scope: flowScopeOf(principal!),
        callbackUrl: body.provider === 'embedded' ? null : `${base}${WAHA_EVENTS_PATH}`,
      });
      const session = await settledSession(input, sessionId, result.position);
      return { status: 201, body: { success: true, session: sessionView(session) }, headers: { Location: `/api/messaging/sessions/${sessionId}/status` } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions',
    operationId: 'listMessagingSessions',
    summary: 'list the sessions of the active workspace, newest first',
    tag,
    auth,
    permission: 'view_resources',
    query: pageQuery,
    responses: {
      200: { description: 'a page', schema: z.object({ success: z.literal(true), items: z.array(sessionOut), nextCursor: z.string().nullable() }) },
      400: { description: 'bad limit or cursor' },
      401: errors[401],
      403: errors[403],
    },
    async handler({ query, principal, services }) {
      return pageReply(await listMessagingSessions(services.readStore, flowScopeOf(principal!), query.limit, query.cursor ?? null), sessionView);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/messaging/sessions/{sessionId}/status',
    operationId: 'getMessagingSessionStatus',
    summary: "a session's status, who it is paired as (me), the QR to scan while SCAN_QR_CODE, and the last change",
    tag,
    auth,
    permission: 'view_resources',
    params: sessionParams,
    responses: {
      200: {
        description: 'the status',
        schema: z.object({
          success: z.literal(true),
          status: z.object({ sessionId: z.string(), name: z.string(), provider: z.string(), status: z.string(), me: meOut, qr: z.string().nullable(), reason: z.string().nullable(), lastChangeAt: z.string() }),
        }),
      },
      ...errors,
    },
    async handler(input) {
      const doc = await callerSession(input, input.params.sessionId);
      return {
        status: 200,
        body: {
          success: true,
          status: { sessionId: doc.id, name: doc.name, provider: doc.provider, status: doc.status, me: doc.me, qr: doc.qr, reason: doc.reason, lastChangeAt: doc.lastChangeAt },
        },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/messaging/sessions/{sessionId}',
    operationId: 'deleteMessagingSession',
    summary: 'disconnect (stop at the provider) and delete a session; its event history is kept, deliveries stop, it answers 404 afterwards',
    tag,
    auth,
    permission: 'edit_resources',
    params: sessionParams,
    responses: {
      200: { description: 'deleted', schema: z.object({ success: z.literal(true), deleted: z.literal(true), sessionId: z.string() }) },
      ...errors,
    },
    async handler(input) {
      const { params, services, command } = input;
      const doc = await callerSession(input, params.sessionId);
      const provider = services.messaging.available(doc.provider) ? services.messaging.provider(doc.provider) : services.messaging.provider('embedded');
      const { result } = await deleteSession(services.eventStore, command, provider, params.sessionId);
      await input.settle(result.position, msgSessionStreamId(params.sessionId));
      return { status: 200, body: { success: true, deleted: true, sessionId: params.sessionId } };
    },
  }),
];

export const messagingRoutes: RouteDef[] = [...sessionRoutes, ...messagingChatRoutes, ...messagingProviderRoutes];
