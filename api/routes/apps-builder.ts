import { z } from 'zod';
import { loadVisibleApp } from '../../commands/apps.js';
import { builderChat, type BuilderAnswer } from '../../commands/apps-builder.js';
import { appStreamId } from '../../domain/apps/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { isLlmProviderError, LLM_PROVIDER_IDS } from '../../ports/llm.js';
import { httpStatusOf } from '../errors.js';
import { openSse, sseReply } from '../sse.js';
import { defineRoute, type RouteDef, type RouteInput } from '../route.js';
import { appErrors, appParams, appsTag, tenantOf } from './apps.js';

/**
 * The app builder chat: the model answers with a reply and file operations, applied as one change
 * (the rules of PUT …/files) or not at all. JSON by default; `stream: true` answers with
 * text/event-stream (api/sse.ts).
 */

const chatBody = z.strictObject({
  message: z.string().trim().min(1).max(20_000),
  stream: z.boolean().default(false),
  provider: z.enum(LLM_PROVIDER_IDS).optional().describe('the first configured real provider when absent, else the offline scaffold'),
  model: z.string().min(1).max(200).optional(),
});

const answerOut = z.object({
  success: z.literal(true),
  reply: z.string(),
  provider: z.string(),
  model: z.string(),
  written: z.array(z.string()).describe('paths the change wrote (unchanged files left out)'),
  deleted: z.array(z.string()),
  version: z.number().int().describe('the app\'s version after the change'),
  usage: z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int(), cost: z.number() }),
});

const sseDescription =
  'with `stream: true`: text/event-stream of named events with increasing ids: `builder.started` {provider, model}, `reply.delta` {text} (real providers), `files.applied` {written, deleted, version}, `builder.completed` (the JSON answer\'s fields), or `error` {status, code, message, details}; `ping` every 15 s without id; no resume (each message is one stream)';

const body = (answer: BuilderAnswer) => {
  const { position: _position, ...rest } = answer;
  return { success: true as const, ...rest };
};

async function streamed(input: RouteInput<{ appId: string }, unknown, z.infer<typeof chatBody>>) {
  const { params, services } = input;
  // Refusals known before anything runs stay plain HTTP answers.
  await loadVisibleApp(services.eventStore, params.appId, tenantOf(input));
  const sse = openSse(input.koa, { now: services.now });
  let id = 0;
  let chain: Promise<void> = sse.send({ event: 'builder.started', id: ++id, data: { appId: params.appId } });
  const send = (event: string, data: unknown) => {
    chain = chain.then(() => sse.send({ event, id: ++id, data }));
    return chain;
  };
  try {
    const answer = await builderChat(
      services,
      input.command,
      { appId: params.appId, tenant: tenantOf(input), message: input.body.message, provider: input.body.provider, model: input.body.model, signal: sse.signal },
      { onDelta: (text) => void send('reply.delta', { text }) },
    );
    await input.settle(answer.position, appStreamId(params.appId));
    if (answer.written.length > 0 || answer.deleted.length > 0) await send('files.applied', { written: answer.written, deleted: answer.deleted, version: answer.version });
    await send('builder.completed', body(answer));
  } catch (err) {
    if (err instanceof DomainError) await send('error', { status: httpStatusOf(err), code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) });
    else if (isLlmProviderError(err)) await send('error', { status: 502, code: err.code, message: err.message });
    else {
      services.logger.error({ err, appId: params.appId }, 'app builder failed');
      await send('error', { status: 500, code: 'INTERNAL', message: 'the builder failed; nothing was changed' });
    }
  } finally {
    await chain;
    sse.close();
  }
  return sseReply();
}

export const appBuilderRoutes: RouteDef[] = [
  defineRoute({
    method: 'POST',
    path: '/apps/{appId}/builder/chat',
    operationId: 'appBuilderChat',
    summary: 'ask the builder to change the app: it answers with a reply and file operations applied as one change (offline provider: a deterministic scaffold)',
    tag: appsTag,
    auth: 'bearer',
    permission: 'edit_resources',
    params: appParams,
    body: chatBody,
    responses: {
      200: { description: `the reply and the change (JSON), or ${sseDescription}`, schema: answerOut },
      400: { description: 'VALIDATION_FAILED, or the model\'s change broke a file rule (the same codes as PUT …/files; nothing is written)' },
      402: { description: 'BUDGET_EXCEEDED: the organization\'s LLM budget is spent' },
      404: appErrors[404],
      409: appErrors[409],
      413: { description: 'the model\'s change is over a file or app limit (nothing is written)' },
      422: { description: 'BUILDER_ANSWER_INVALID: the model\'s file operations were malformed (nothing is written)' },
      502: { description: 'the LLM provider failed (PROVIDER_*)' },
    },
    async handler(input) {
      if (input.body.stream) return streamed(input);
      const { params, services } = input;
      const answer = await builderChat(services, input.command, { appId: params.appId, tenant: tenantOf(input), message: input.body.message, provider: input.body.provider, model: input.body.model });
      await input.settle(answer.position, appStreamId(params.appId));
      return { status: 200, body: body(answer) };
    },
  }),
];
