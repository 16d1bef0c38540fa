import { z } from 'zod';
import { flowScopeOf } from '../../commands/flows.js';
import { idSchema, isVisibleTo } from '../../domain/flows/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { EXTENSION_CHAT_SOURCE } from '../../domain/extension/index.js';
import { runStateView } from '../../projections/runs.js';
import { loadRun } from '../../commands/runs.js';
import { listExtensionFlows } from '../../projections/extension.js';
import { defineRoute, type RouteInput } from '../route.js';
import { visibleFlow } from './flows.js';
import { readErrors } from './flows-schemas.js';
import { pageQuery, pageReply } from './pagination.js';
import { queuedReply, replyFor, runReplySchema, startRun } from './runs.js';

/** The web extension's flow operations: run a flow on a page, the flows it may run, a process it started. */
export const EXTENSION_TAG = 'Web extension';
/** Runs started from the extension say so in their `source`. */
export const EXTENSION_RUN_SOURCE = EXTENSION_CHAT_SOURCE;

const MAX_FIELD_CHARS = 8192;
const pageData = z.strictObject({
  url: z.string().max(MAX_FIELD_CHARS).optional(),
  title: z.string().max(1000).optional(),
  selection: z.string().max(200_000).optional().describe('the text the user selected (at most 200,000 characters)'),
  text: z.string().optional().describe("the page's text (at most EXTENSION_MAX_TEXT_CHARS = 200,000 characters)"),
  html: z.string().optional().describe("the page's HTML (at most EXTENSION_MAX_HTML_BYTES = 2 MiB); reduced to readable text on the server, scripts never run"),
  meta: z.record(z.string(), z.json()).optional().describe('anything else the extension sends along (description, language, …)'),
});
const processBody = z.strictObject({
  flowId: idSchema,
  data: pageData.default({}),
  async: z.boolean().default(false),
});

export type PageData = z.infer<typeof pageData>;

/**
 * The run's inputs from what the page sent: `text` is the given text, else the readable text of
 * the HTML (cut at the character limit; `textTruncated` says so). HTML itself is never passed on.
 */
export function pageInputs(input: Pick<RouteInput<unknown, unknown, unknown>, 'services'>, data: PageData) {
  const { config, html } = input.services;
  const maxChars = config.EXTENSION_MAX_TEXT_CHARS;
  if (data.text !== undefined && data.text.length > maxChars) {
    throw new DomainError('TEXT_TOO_LARGE', `data.text has ${data.text.length} characters; at most ${maxChars}`, 'too_large', { field: 'body.data.text', chars: data.text.length, maxChars });
  }
  let text = data.text ?? null;
  let textSource: 'text' | 'html' | null = text === null ? null : 'text';
  let textTruncated = false;
  let htmlTitle: string | null = null;
  if (data.html !== undefined) {
    const read = html.read(data.html, { maxBytes: config.EXTENSION_MAX_HTML_BYTES, maxChars });
    htmlTitle = read.title;
    if (text === null) {
      text = read.text;
      textSource = 'html';
      textTruncated = read.truncated;
    }
  }
  const inputs: Record<string, unknown> = {
    url: data.url ?? null,
    title: data.title ?? htmlTitle,
    selection: data.selection ?? null,
    text,
    meta: data.meta ?? {},
    source: EXTENSION_RUN_SOURCE,
  };
  return { inputs, textSource, textTruncated, chars: text?.length ?? 0 };
}

const pageInfo = z.object({ textSource: z.enum(['text', 'html']).nullable(), chars: z.number().int(), truncated: z.boolean() }).describe('where the text came from and how much of it went to the flow');
const queuedWithPage = queuedReply.extend({ page: pageInfo });
const flowItem = z.object({ flowId: z.string(), name: z.string(), description: z.string().nullable(), updatedAt: z.string(), inputSchema: z.record(z.string(), z.unknown()) });
const processParams = z.strictObject({ processId: idSchema });

export const extensionRoutes = [
  defineRoute({
    method: 'POST',
    path: '/extension/process',
    operationId: 'extensionProcess',
    summary: "run a flow on a page the extension sent (inputs: url, title, selection, text, meta, source); HTML is read on the server; sync by default, 202 with processId when async",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    permission: 'edit_resources',
    body: processBody,
    // The page's HTML (EXTENSION_MAX_HTML_BYTES) and text (EXTENSION_MAX_TEXT_CHARS, up to 4 bytes each in UTF-8) must reach the route to be refused by name.
    bodyLimitBytes: (config) => Math.max(config.BODY_LIMIT_BYTES, config.EXTENSION_MAX_HTML_BYTES + 4 * config.EXTENSION_MAX_TEXT_CHARS + 64 * 1024),
    responses: {
      200: { description: 'the finished run (as POST /flows/{flowId}/run) plus `page: {textSource, chars, truncated}`', schema: runReplySchema.extend({ page: pageInfo }) },
      202: { description: 'queued: poll GET /extension/processes/{processId}', schema: queuedWithPage },
      ...readErrors,
      400: { description: 'VALIDATION_FAILED (names the field)' },
      402: { description: 'BUDGET_EXCEEDED' },
      404: { description: 'FLOW_NOT_FOUND (also for another tenant\'s flow)' },
      413: { description: 'HTML_TOO_LARGE (data.html over 2 MiB) or TEXT_TOO_LARGE (data.text over 200,000 characters)' },
      504: { description: 'RUN_TIMED_OUT' },
    },
    async handler(input) {
      const { body, principal } = input;
      await visibleFlow(input, body.flowId);
      const page = pageInputs(input, body.data);
      const started = await startRun(input, {
        flowId: body.flowId,
        mode: 'flow',
        inputs: page.inputs,
        async: body.async,
        requestedBy: principal!.userId,
        source: EXTENSION_RUN_SOURCE,
        scope: flowScopeOf(principal!),
      });
      const reply = replyFor(started, 'flow', null, body.async);
      const pageInfo = { textSource: page.textSource, chars: page.chars, truncated: page.textTruncated };
      return { ...reply, body: { ...(reply.body as object), page: pageInfo } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/flows',
    operationId: 'extensionListFlows',
    summary: "flows the extension can run: active flows whose trigger has an input schema, with the schema (paginated; a page may be short while nextCursor is set)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    permission: 'view_resources',
    query: pageQuery,
    responses: { 200: { description: '{success, items: [{flowId, name, description, updatedAt, inputSchema}], nextCursor}', schema: z.object({ success: z.literal(true), items: z.array(flowItem), nextCursor: z.string().nullable() }) } },
    async handler(input) {
      const page = await listExtensionFlows(input.services.readStore, flowScopeOf(input.principal!), { limit: input.query.limit, cursor: input.query.cursor });
      return pageReply(page);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/processes/{processId}',
    operationId: 'extensionGetProcess',
    summary: 'status and per-node results of a process started from the extension',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    permission: 'view_resources',
    params: processParams,
    responses: {
      200: { description: '{success, process: {processId, flowId, status, nodes: [{nodeId, status, output, error, …}], …}}', schema: z.object({ success: z.literal(true), process: z.looseObject({ processId: z.string(), status: z.string() }) }) },
      404: { description: 'PROCESS_NOT_FOUND (also a process of another tenant, or one not started from the extension)' },
    },
    async handler(input) {
      // From the run's own stream, as GET /processes/{id}: runs are answered before they are projected.
      const run = await loadRun(input.services.eventStore, input.params.processId);
      const view = run.exists && isVisibleTo(run, flowScopeOf(input.principal!)) ? runStateView(input.params.processId, run) : null;
      if (!view || view.source !== EXTENSION_RUN_SOURCE) throw new DomainError('PROCESS_NOT_FOUND', 'process not found', 'not_found');
      return { status: 200, body: { success: true, process: view } };
    },
  }),
];
