import {
  APP_PACKAGE_SPECIFIERS,
  APP_FILE_EXTENSIONS, BINARY_EXTENSIONS, extensionOf, scaffoldFiles,
  type AppEvent, type AppFileEncoding, type AppState, type AppTenant,
} from '../domain/apps/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmGateway, LlmProviderId, LlmTool } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import { loadVisibleApp } from './apps.js';
import { changeAppFiles, type FileWrite } from './apps-files.js';
import type { CommandContext, HandleResult } from './handle.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * The app builder (POST /apps/{id}/builder/chat): a model reads the app (files, contract) and the
 * user's message and answers with a reply and file operations (write, delete), which are checked by
 * the same rules as PUT …/files and applied as ONE change (`AppFilesChanged`, source `builder`) or
 * not at all. The offline provider answers with the deterministic scaffold of domain/apps/scaffold.ts.
 */

export interface BuilderPorts {
  llm: LlmGateway;
  eventStore: EventStore;
  logger: Logger;
  newId(): string;
}

export interface BuilderProgress {
  /** A piece of the model's reply as it streams (real providers only). */
  onDelta?(text: string): void;
}

export interface BuilderAnswer {
  reply: string;
  provider: LlmProviderId;
  model: string;
  /** Paths written and deleted by the change; both empty when the answer changed nothing. */
  written: string[];
  deleted: string[];
  /** The app's version after the change. */
  version: number;
  position: number | null;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; cost: number };
}

/** Text of the current files the model sees, at most this many characters in all (binary files listed by name only). */
const CONTEXT_FILE_CHARS = 200_000;
const MAX_ANSWER_TOKENS = 16_384;
const OFFLINE_MODEL = 'offline-scaffold';

const EDIT_TOOL: LlmTool = {
  name: 'edit_app_files',
  description: 'Apply the change to the app\'s files (all of it at once) and say what you did.',
  inputSchema: {
    type: 'object',
    required: ['reply'],
    properties: {
      reply: { type: 'string', description: 'what you changed and why, for the user' },
      write: {
        type: 'array',
        description: 'files to create or replace, each with its whole content',
        items: {
          type: 'object', required: ['path', 'content'],
          properties: { path: { type: 'string' }, content: { type: 'string' }, encoding: { type: 'string', enum: ['utf8', 'base64'] } },
        },
      },
      delete: { type: 'array', items: { type: 'string' }, description: 'paths to delete' },
    },
  },
};

function systemPrompt(app: AppState): string {
  let budget = CONTEXT_FILE_CHARS;
  const files = Object.values(app.files).map((f) => {
    if (f.encoding === 'base64' || BINARY_EXTENSIONS.has(extensionOf(f.path))) return `--- ${f.path} (binary, ${f.size} bytes)`;
    const text = f.content.length <= budget ? f.content : `${f.content.slice(0, Math.max(0, budget))}\n… (truncated)`;
    budget = Math.max(0, budget - text.length);
    return `--- ${f.path}\n${text}`;
  });
  return [
    'You build small static web apps (HTML, CSS, JavaScript) whose backend is one flow.',
    'The page calls the flow through the generated script `app-client.js` (load it with <script src="app-client.js">):',
    '`window.AppClient.call(inputs)` validates inputs against the contract\'s input schema, calls the flow and resolves to its output;',
    '`AppClient.readForm(form)` turns a form into inputs. Use relative paths only.',
    `Allowed file extensions: ${APP_FILE_EXTENSIONS.join(', ')}; paths are relative, no "..". Binary files as base64.`,
    // The model writes imports; telling it the list spares a deployment that fails as PACKAGE_NOT_ALLOWED.
    `A .ts/.tsx/.jsx file named by <script src> is bundled; it may import the app's own files and only these packages: ${APP_PACKAGE_SPECIFIERS.join(', ')}`,
    '(for Preact JSX start the file with /** @jsxRuntime automatic */ /** @jsxImportSource preact */; for React, /** @jsxRuntime automatic */ alone).',
    'Answer by calling edit_app_files once with the whole change and a short reply.',
    '',
    `App: ${app.name}${app.description ? ` — ${app.description}` : ''}`,
    `Contract input schema: ${JSON.stringify(app.contract.input)}`,
    `Contract output schema: ${JSON.stringify(app.contract.output)}`,
    files.length > 0 ? `Current files:\n${files.join('\n')}` : 'The app has no files yet.',
  ].join('\n');
}

/** The provider asked for, else the first configured real one (the rule every context shares), else the offline scaffold. */
async function chooseProvider(llm: LlmGateway, caller: LlmCaller, requested: { provider?: LlmProviderId; model?: string }): Promise<{ provider: LlmProviderId; model: string }> {
  const chosen = requested.provider ? { provider: requested.provider, model: llm.defaultModelOf(requested.provider) } : await llm.defaultModel(caller);
  const provider = chosen.provider;
  if (provider === 'offline') return { provider, model: requested.model ?? OFFLINE_MODEL };
  const model = requested.model ?? chosen.model;
  if (!model) {
    const message = `${provider} has no default model: name one`;
    throw new DomainError('VALIDATION_FAILED', `body.model: ${message}`, 'invalid', { fields: [{ field: 'body.model', message }] });
  }
  return { provider, model };
}

function operationsOf(input: Record<string, unknown>): { reply: string; write: FileWrite[]; delete: string[] } {
  const bad = (message: string) => new DomainError('BUILDER_ANSWER_INVALID', `the model's file operations are malformed: ${message}; nothing was changed`, 'unprocessable', { message });
  const reply = typeof input.reply === 'string' ? input.reply : '';
  const write = input.write ?? [];
  const remove = input.delete ?? [];
  if (!Array.isArray(write)) throw bad('write is not a list');
  if (!Array.isArray(remove) || remove.some((p) => typeof p !== 'string')) throw bad('delete is not a list of paths');
  const files = write.map((w, i) => {
    if (typeof w !== 'object' || w === null || typeof (w as FileWrite).path !== 'string' || typeof (w as FileWrite).content !== 'string') throw bad(`write[${i}] needs a path and a content`);
    const encoding = (w as FileWrite).encoding ?? 'utf8';
    if (encoding !== 'utf8' && encoding !== 'base64') throw bad(`write[${i}].encoding is neither utf8 nor base64`);
    return { path: (w as FileWrite).path, content: (w as FileWrite).content, encoding: encoding as AppFileEncoding };
  });
  return { reply, write: files, delete: remove as string[] };
}

export async function builderChat(
  ports: BuilderPorts,
  context: CommandContext,
  request: { appId: string; tenant: AppTenant; message: string; provider?: LlmProviderId; model?: string; signal?: AbortSignal },
  progress: BuilderProgress = {},
): Promise<BuilderAnswer> {
  const app = await loadVisibleApp(ports.eventStore, request.appId, request.tenant);
  const caller: LlmCaller = { orgId: request.tenant.orgId, userId: request.tenant.userId };
  const { provider, model } = await chooseProvider(ports.llm, caller, request);
  let answer: { reply: string; write: FileWrite[]; delete: string[] };
  let usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0, cost: 0 };
  if (provider === 'offline') {
    const files = scaffoldFiles(app.name, app.contract);
    answer = {
      reply: `Offline builder: wrote the scaffold (${files.map((f) => f.path).join(', ')}): a form with one field per input of the contract that calls the linked flow through app-client.js. Configure an LLM provider for edits that follow your message.`,
      write: files,
      delete: [],
    };
  } else {
    await assertWithinBudget({ eventStore: ports.eventStore, clock: { now: () => context.now } }, caller, provider);
    const llm = await ports.llm.providerFor(caller, provider);
    const result = await llm.complete({
      model, maxTokens: MAX_ANSWER_TOKENS, signal: request.signal, tools: [EDIT_TOOL], toolChoice: { type: 'tool', name: EDIT_TOOL.name },
      messages: [{ role: 'system', content: systemPrompt(app) }, { role: 'user', content: request.message }],
      ...(progress.onDelta ? { stream: true, onDelta: progress.onDelta } : {}),
    });
    usage = { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens, totalTokens: result.usage.totalTokens, cost: result.cost };
    if (caller.orgId && result.cost > 0) {
      try {
        await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId: `app-builder:${ports.newId()}` });
      } catch (err) {
        ports.logger.error({ err, orgId: caller.orgId, cost: result.cost }, 'LLM spend not recorded');
      }
    }
    const call = result.toolCalls?.find((c) => c.name === EDIT_TOOL.name);
    if (!call) answer = { reply: result.text, write: [], delete: [] };
    else {
      if (call.invalidArguments !== undefined) throw new DomainError('BUILDER_ANSWER_INVALID', 'the model\'s file operations are not a JSON object; nothing was changed', 'unprocessable');
      answer = operationsOf(call.input);
      if (!answer.reply) answer.reply = result.text;
    }
  }
  let applied: HandleResult<AppState, AppEvent> | null = null;
  if (answer.write.length > 0 || answer.delete.length > 0) {
    applied = await changeAppFiles(ports.eventStore, context, request.appId, request.tenant, { files: answer.write, delete: answer.delete, source: 'builder' });
  }
  const event = applied?.events[0];
  const written = event?.type === 'AppFilesChanged' ? event.data.put.map((f) => f.path) : [];
  const deleted = event?.type === 'AppFilesChanged' ? event.data.deleted : [];
  return { reply: answer.reply, provider, model, written, deleted, version: applied ? applied.revision : app.version, position: applied?.position ?? null, usage };
}
