import { z } from 'zod';
import { askExtensionModel, pageMessages, type ExtensionAiAnswer } from '../../commands/extension-ai.js';
import { chooseExtensionModel, contextCharsFor, contextTokensOf, extensionModels, loadOrgExtensionSettings, updateOrgExtensionSettings, type ModelRef } from '../../commands/extension-models.js';
import { extensionSettingsStreamId, modelRefText } from '../../domain/extension/index.js';
import { DomainError } from '../../domain/shared/decider.js';
import { LlmProviderError, isLlmAbort, type LlmCaller, type LlmMessage } from '../../ports/llm.js';
import { errorBody, ValidationError } from '../errors.js';
import { parseMultipart } from '../multipart.js';
import { defineRoute, type RouteInput, type RouteReply } from '../route.js';
import { openSse, sseReply } from '../sse.js';
import { EXTENSION_TAG } from './extension.js';

/** Direct AI for the extension: a prompt (with the page as context) or a PDF, on the default or an allowed model. */

type AnyInput = RouteInput<unknown, unknown, unknown>;
const MAX_PROMPT_CHARS = 32_000;
export const modelPorts = (input: Pick<AnyInput, 'services'>) => ({ llm: input.services.llm, eventStore: input.services.eventStore, settings: input.services.config });
const callerOf = (input: AnyInput): LlmCaller & { userId: string } => ({ orgId: input.principal!.orgId, userId: input.principal!.userId });

const modelRef = z.object({ provider: z.string(), model: z.string() });
const usageOut = z.object({ total_tokens: z.number(), prompt_tokens: z.number(), completion_tokens: z.number(), cost: z.number() });
const aiBody = z.strictObject({
  prompt: z.string().trim().min(1).max(MAX_PROMPT_CHARS),
  context: z.strictObject({
    url: z.string().max(8192).optional(),
    title: z.string().max(1000).optional(),
    text: z.string().optional().describe('page text, at most EXTENSION_MAX_TEXT_CHARS (200,000) characters; cut to the model\'s context'),
  }).optional(),
  model: z.string().max(300).optional().describe('"provider:model", one of GET /extension/models `allowed`; default: the default model'),
  stream: z.boolean().default(false).describe('true: answer as text/event-stream (events meta, delta, done, error)'),
});
const contextUse = z.object({ chars: z.number().int(), usedChars: z.number().int(), truncated: z.boolean(), contextTokens: z.number().int() });
const aiReply = z.object({ success: z.literal(true), output: z.string(), model: modelRef, usage: usageOut, executionTime: z.number(), context: contextUse.nullable() });
const documentUse = z.object({
  pageCount: z.number().int(), pagesUsed: z.number().int(), chars: z.number().int(), truncated: z.boolean(),
  contextTokens: z.number().int(), contextChars: z.number().int().describe('characters of PDF text the model\'s context allowed (beside the prompt and the answer)'),
});
const pdfReply = z.object({ success: z.literal(true), output: z.string(), model: modelRef, usage: usageOut, executionTime: z.number(), document: documentUse });
const pdfForm = z.object({
  file: z.file().describe('the PDF (application/pdf, at most 20 MiB and 300 pages)'),
  prompt: z.string().describe('the question about the document (at most 32,000 characters)'),
  model: z.string().optional().describe('"provider:model" from GET /extension/models'),
});
const settingsBody = z.strictObject({
  defaultModel: modelRefText.nullable().describe('"provider:model", or null for the service default'),
  allowedModels: z.array(modelRefText).max(100).nullable().describe('"provider:model" list, or null for the service list'),
});
const settingsOut = z.object({ orgId: z.string(), defaultModel: z.string().nullable(), allowedModels: z.array(z.string()).nullable(), updatedAt: z.string().nullable(), updatedBy: z.string().nullable() });
const activeOrg = (input: AnyInput): string => {
  const orgId = input.principal!.orgId;
  if (!orgId) throw new DomainError('NO_ACTIVE_ORGANIZATION', 'extension settings belong to an organization: switch to one first', 'forbidden');
  return orgId;
};
const modelsReply = z.object({ success: z.literal(true), default: modelRef, allowed: z.array(modelRef), source: z.enum(['organization', 'settings', 'catalogue']) });

const llmErrors = {
  400: { description: 'VALIDATION_FAILED, INVALID_MODEL or MODEL_NOT_ALLOWED (body.model), PROVIDER_NOT_CONFIGURED' },
  402: { description: 'BUDGET_EXCEEDED' },
  502: { description: "the provider failed: PROVIDER_ERROR, PROVIDER_TIMEOUT, PROVIDER_RATE_LIMITED, PROVIDER_BAD_RESPONSE" },
};

function usageOf(answer: ExtensionAiAnswer) {
  const u = answer.result.usage;
  return { total_tokens: u.totalTokens, prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, cost: answer.result.cost };
}

function providerFailure(err: LlmProviderError): RouteReply {
  const status = err.code === 'PROVIDER_NOT_CONFIGURED' ? 400 : 502;
  const headers: Record<string, string> = err.retryAfter !== undefined ? { 'Retry-After': String(Math.ceil(err.retryAfter)) } : {};
  return { status, body: errorBody(err.code, err.message, err.toDetails()), headers };
}

function abortOnDisconnect(koa: AnyInput['koa']): AbortSignal {
  const controller = new AbortController();
  koa.res.once('close', () => {
    if (!koa.res.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

/** Asks and answers JSON, or streams SSE when `stream`: meta → delta… → done (or error). */
async function answer(input: AnyInput, model: ModelRef, messages: LlmMessage[], stream: boolean, extra: Record<string, unknown>): Promise<RouteReply> {
  const { services, command, koa } = input;
  const caller = callerOf(input);
  const ports = { llm: services.llm, eventStore: services.eventStore, logger: services.logger, newId: services.newId };
  if (!stream) {
    let answered: ExtensionAiAnswer;
    try {
      answered = await askExtensionModel(ports, command, caller, { model, messages, signal: abortOnDisconnect(koa) });
    } catch (err) {
      if (err instanceof LlmProviderError) return providerFailure(err);
      if (isLlmAbort(err)) throw new DomainError('REQUEST_ABORTED', 'the client closed the connection', 'cancelled');
      throw err;
    }
    if (answered.spend) await input.settle(answered.spend.position, answered.spend.streamId);
    return { status: 200, body: { success: true, output: answered.result.text, model: { provider: answered.result.provider, model: answered.result.model }, usage: usageOf(answered), executionTime: answered.executionTime, ...extra } };
  }
  // Refusals known before the call (budget, credentials) still answer JSON with their status.
  const llm = await services.llm.providerFor(caller, model.provider).catch((err) => err as Error);
  if (llm instanceof LlmProviderError) return providerFailure(llm);
  const sse = openSse(koa);
  let id = 0;
  const send = (event: string, data: unknown) => sse.send({ event, id: ++id, data });
  await send('meta', { model, ...extra });
  try {
    const answered = await askExtensionModel(ports, command, caller, { model, messages, signal: sse.signal, onDelta: (text) => void send('delta', { text }) });
    await send('done', { output: answered.result.text, model: { provider: answered.result.provider, model: answered.result.model }, usage: usageOf(answered), executionTime: answered.executionTime, finishReason: answered.result.finishReason });
  } catch (err) {
    if (!sse.closed) {
      const code = err instanceof DomainError || err instanceof LlmProviderError ? err.code : isLlmAbort(err) ? 'REQUEST_ABORTED' : 'INTERNAL_ERROR';
      const message = err instanceof DomainError || err instanceof LlmProviderError ? err.message : 'the answer failed';
      if (code === 'INTERNAL_ERROR') services.logger.error({ err, requestId: command.requestId }, 'extension AI stream failed');
      await send('error', { code, message });
    }
  } finally {
    sse.close();
  }
  return sseReply();
}

export const extensionAiRoutes = [
  defineRoute({
    method: 'POST',
    path: '/extension/ai',
    operationId: 'extensionAi',
    summary: 'one answer from the default (or an allowed) model, with the page as context; `stream: true` answers text/event-stream (meta, delta, done, error)',
    tag: EXTENSION_TAG,
    auth: 'bearer',
    body: aiBody,
    responses: {
      200: { description: 'application/json {success, output, model, usage, executionTime, context}; with `stream: true` text/event-stream: `meta` {model, context}, `delta` {text}…, then `done` {output, model, usage, executionTime, finishReason} or `error` {code, message}; ids count from 1 (the answer is not kept: no resume)', schema: aiReply },
      ...llmErrors,
      413: { description: 'TEXT_TOO_LARGE: context.text over 200,000 characters' },
    },
    async handler(input) {
      const { body, services } = input;
      const model = await chooseExtensionModel(modelPorts(input), callerOf(input), body.model);
      let context: z.infer<typeof contextUse> | null = null;
      let page = body.context;
      if (page?.text !== undefined) {
        const maxChars = services.config.EXTENSION_MAX_TEXT_CHARS;
        if (page.text.length > maxChars) throw new DomainError('TEXT_TOO_LARGE', `context.text has ${page.text.length} characters; at most ${maxChars}`, 'too_large', { field: 'body.context.text', chars: page.text.length, maxChars });
        const room = contextCharsFor(model, body.prompt.length + (page.title?.length ?? 0) + (page.url?.length ?? 0));
        const used = Math.min(page.text.length, room);
        context = { chars: page.text.length, usedChars: used, truncated: used < page.text.length, contextTokens: contextTokensOf(model) };
        page = { ...page, text: page.text.slice(0, used) };
      }
      return answer(input, model, pageMessages(body.prompt, page), body.stream, { context });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/extension/ai/pdf',
    operationId: 'extensionAiPdf',
    summary: "ask about a PDF: multipart `file` (≤ 20 MiB, ≤ 300 pages), `prompt`, `model?`; the text is read on the server page by page and cut to the model's context (`document` says how much was used)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    multipart: pdfForm,
    responses: {
      200: { description: '{success, output, model, usage, executionTime, document: {pageCount, pagesUsed, chars, truncated, contextTokens, contextChars}}', schema: pdfReply },
      ...llmErrors,
      400: { description: 'VALIDATION_FAILED (body.prompt, body.file), PDF_UNREADABLE (details.reason: encrypted, corrupt, no_text), INVALID_MODEL, MODEL_NOT_ALLOWED, multipart refusals (UNEXPECTED_FIELD, FIELD_TOO_LARGE, …)' },
      413: { description: 'FILE_TOO_LARGE (over 20 MiB, refused while streaming) or PDF_TOO_MANY_PAGES (over 300 pages)' },
      415: { description: 'UNSUPPORTED_MEDIA_TYPE: not multipart/form-data' },
      504: { description: 'PDF_TIMEOUT: reading the PDF took longer than PDF_READ_TIMEOUT_MS' },
    },
    async handler(input) {
      const { services, koa } = input;
      const { config } = services;
      const form = await parseMultipart(koa.req, {
        fields: { prompt: { maxBytes: MAX_PROMPT_CHARS * 4 }, model: { maxBytes: 300 } },
        files: { file: { maxBytes: config.EXTENSION_PDF_MAX_BYTES } },
      });
      const prompt = (form.fields.prompt ?? '').trim();
      const problems = [];
      if (!prompt) problems.push({ field: 'body.prompt', message: 'required' });
      else if (prompt.length > MAX_PROMPT_CHARS) problems.push({ field: 'body.prompt', message: `at most ${MAX_PROMPT_CHARS} characters` });
      const file = form.files.file;
      if (!file || file.size === 0) problems.push({ field: 'body.file', message: 'a PDF file is required' });
      if (problems.length > 0) throw new ValidationError(problems);
      const model = await chooseExtensionModel(modelPorts(input), callerOf(input), form.fields.model || undefined);
      const contextChars = contextCharsFor(model, prompt.length + 200);
      const pdf = await services.pdf.read(file!.value, { maxPages: config.EXTENSION_PDF_MAX_PAGES, maxChars: contextChars, signal: abortOnDisconnect(koa) });
      // Page markers count against the same budget as the text.
      let text = '';
      let pagesUsed = 0;
      for (const [i, pageText] of pdf.pages.entries()) {
        const piece = `--- Page ${i + 1} ---\n${pageText}\n`;
        if (text.length + piece.length > contextChars) {
          text += piece.slice(0, Math.max(0, contextChars - text.length));
          if (contextChars - text.length >= 0 && piece.length > 0) pagesUsed += 1;
          break;
        }
        text += piece;
        pagesUsed += 1;
      }
      const truncated = pdf.truncated || pagesUsed < pdf.pageCount || text.length >= contextChars;
      const document = { pageCount: pdf.pageCount, pagesUsed, chars: text.length, truncated, contextTokens: contextTokensOf(model), contextChars };
      const name = file!.filename ? ` "${file!.filename.replace(/[\r\n"]/g, ' ').slice(0, 200)}"` : '';
      const messages: LlmMessage[] = [
        { role: 'system', content: `The user uploaded a PDF${name} of ${pdf.pageCount} page(s). Its text follows${truncated ? ` (cut to the first ${text.length} characters)` : ''}. Answer the question about it.\n\n${text}` },
        { role: 'user', content: prompt },
      ];
      return answer(input, model, messages, false, { document });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/models',
    operationId: 'extensionModels',
    summary: "the default model and the allowed list (the organization's settings, else the service variables EXTENSION_DEFAULT_MODEL, EXTENSION_ALLOWED_MODELS; else the first configured provider's default model, offline only when none is configured, and the catalogue of the providers the caller can use)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    responses: { 200: { description: '{success, default: {provider, model}, allowed: [{provider, model}], source}', schema: modelsReply } },
    async handler(input) {
      const models = await extensionModels(modelPorts(input), callerOf(input));
      return { status: 200, body: { success: true, ...models } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/extension/settings',
    operationId: 'extensionGetSettings',
    summary: "added: the active organization's extension settings (default model, allowed list; null = the service variables apply)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    permission: 'view_resources',
    responses: { 200: { description: '{success, settings}', schema: z.object({ success: z.literal(true), settings: settingsOut }) }, 403: { description: 'NO_ACTIVE_ORGANIZATION (personal workspace), or the role lacks view_resources' } },
    async handler(input) {
      const orgId = activeOrg(input);
      const state = await loadOrgExtensionSettings(input.services.eventStore, orgId);
      return { status: 200, body: { success: true, settings: { orgId, ...state } } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/extension/settings',
    operationId: 'extensionPutSettings',
    summary: "added: set the active organization's extension default model and allowed list (`provider:model`; null = the service variables)",
    tag: EXTENSION_TAG,
    auth: 'bearer',
    permission: 'manage_settings',
    body: settingsBody,
    responses: {
      200: { description: '{success, settings}', schema: z.object({ success: z.literal(true), settings: settingsOut }) },
      400: { description: 'VALIDATION_FAILED, INVALID_MODEL, UNKNOWN_MODEL, DEFAULT_MODEL_NOT_ALLOWED (names the field)' },
      403: { description: 'NO_ACTIVE_ORGANIZATION (personal workspace), or the role lacks manage_settings' },
    },
    async handler(input) {
      const orgId = activeOrg(input);
      const result = await updateOrgExtensionSettings(input.services, input.command, orgId, input.principal!.userId, input.body);
      await input.settle(result.position, extensionSettingsStreamId(orgId));
      return { status: 200, body: { success: true, settings: { orgId, ...result.state } } };
    },
  }),
];
