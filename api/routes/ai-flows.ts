import { z } from 'zod';
import { chooseDesigner, generateFlow, MAX_ATTEMPTS } from '../../commands/ai-flows.js';
import { flowNameSchema, MAX_FLOW_DESCRIPTION_LENGTH, MAX_FLOW_NAME_LENGTH } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { LLM_PROVIDER_IDS, LlmProviderError, isLlmAbort } from '../../ports/llm.js';
import { errorBody } from '../errors.js';
import { defineRoute, type RouteInput } from '../route.js';
import { etagOf, writeFlow } from './flows.js';
import { flowOut, readErrors } from './flows-schemas.js';

/** What a user may describe in one request: enough for a detailed brief, small enough to keep the prompt (and its cost) bounded. */
export const MAX_GENERATION_DESCRIPTION_LENGTH = 4000;

const generateBody = z.strictObject({
  description: z.string().trim().min(1, 'must not be empty').max(MAX_GENERATION_DESCRIPTION_LENGTH).describe('what the flow should do, in plain words'),
  provider: z.enum(LLM_PROVIDER_IDS).optional().describe('the provider that designs; the first configured one when absent (never offline)'),
  model: z.string().trim().min(1).max(200).optional().describe("the provider's model; a preferred one of the price table when absent"),
  name: flowNameSchema.optional().describe("the new flow's name; the model's proposal when absent"),
});

const generateReply = z.object({
  success: z.literal(true),
  flow: flowOut,
  attempts: z.number().int().min(1).max(MAX_ATTEMPTS).describe('model calls made: 2 when the first answer was refused and the retry passed'),
  usage: z.object({
    total_tokens: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    cached_tokens: z.number(),
    cost: z.number().describe('US dollars, every attempt together'),
  }),
  provider: z.enum(LLM_PROVIDER_IDS),
  model: z.string(),
});

type AnyInput = RouteInput<unknown, unknown, unknown>;

/** Aborts the provider call when the client goes away: nobody will read the answer, and each token costs. */
function abortOnDisconnect(koa: AnyInput['koa']): AbortSignal {
  const controller = new AbortController();
  koa.res.once('close', () => {
    if (!koa.res.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

/** The name when neither the request nor the model gave one: the description's first line, shortened. */
function fallbackName(description: string): string {
  const line = description.split('\n')[0].trim();
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'Generated flow';
}

export const aiRoutes = [
  defineRoute({
    method: 'POST',
    path: '/ai/generate-flow',
    operationId: 'generateFlow',
    summary: `generate a flow (nodes and edges) from a description with an LLM: the answer is checked with the flow's node and connection rules, refused answers are retried once with the problems, and the flow is created in the active workspace`,
    tag: 'AI',
    auth: 'bearer',
    permission: 'edit_resources',
    body: generateBody,
    responses: {
      201: { description: 'the flow created (ETag: its version)', schema: generateReply },
      400: { description: 'VALIDATION_FAILED, OFFLINE_PROVIDER_CANNOT_DESIGN, PROVIDER_NOT_CONFIGURED or UNKNOWN_MODEL' },
      401: readErrors[401],
      402: { description: 'the organization has spent its monthly LLM budget (BUDGET_EXCEEDED)' },
      403: readErrors[403],
      422: { description: `GENERATED_FLOW_INVALID: ${MAX_ATTEMPTS} answers were refused; details.problems lists the last one's, nothing is created` },
      502: { description: 'the provider failed: PROVIDER_ERROR, PROVIDER_TIMEOUT, PROVIDER_RATE_LIMITED (with Retry-After) or PROVIDER_BAD_RESPONSE' },
    },
    async handler(input) {
      const { principal, services, body, command } = input;
      const caller = { orgId: principal!.orgId };
      const designer = await chooseDesigner(services.llm, caller, { provider: body.provider, model: body.model });
      let generated;
      try {
        generated = await generateFlow({ ports: services, context: command, caller, signal: abortOnDisconnect(input.koa) }, { description: body.description, ...designer });
      } catch (err) {
        if (err instanceof LlmProviderError) {
          if (err.code !== 'PROVIDER_NOT_CONFIGURED') services.logger.warn({ provider: err.provider, code: err.code, status: err.status, requestId: command.requestId }, 'LLM provider failed');
          const headers: Record<string, string> = err.retryAfter !== undefined ? { 'Retry-After': String(Math.ceil(err.retryAfter)) } : {};
          return { status: err.code === 'PROVIDER_NOT_CONFIGURED' ? 400 : 502, body: errorBody(err.code, err.message, err.toDetails()), headers };
        }
        if (isLlmAbort(err)) throw new DomainError('REQUEST_ABORTED', 'the client closed the connection', 'cancelled');
        throw err;
      }
      if (generated.spend) await input.settle(generated.spend.position, generated.spend.streamId);
      const { flow: designed } = generated;
      const flowId = services.newId();
      const written = await writeFlow(input as AnyInput, flowId, {
        type: 'CreateFlow',
        flowId,
        name: (body.name ?? designed.name ?? fallbackName(body.description)).slice(0, MAX_FLOW_NAME_LENGTH),
        description: designed.description ?? body.description.slice(0, MAX_FLOW_DESCRIPTION_LENGTH),
        ownerId: principal!.userId,
        orgId: principal!.orgId,
        workspaceId: principal!.workspaceId,
        nodes: designed.nodes,
        edges: designed.edges,
      });
      const flow = written.flow!;
      return {
        status: 201,
        body: { success: true, flow, attempts: generated.attempts, usage: generated.usage, provider: generated.provider, model: generated.model },
        headers: etagOf(flow.version),
      };
    },
  }),
];
