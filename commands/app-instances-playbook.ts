import { APP_INSTANCE_TYPES, type AppInstanceState, type Json, type JsonObject } from '../domain/app-instances/index.js';
import { flowDecider, flowStreamId } from '../domain/flows/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { LlmCaller, LlmGateway, LlmProviderId } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import { loadState, type CommandContext } from './handle.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';

/**
 * POST /app-instances/{id}/playbook: markdown telling a worker agent how to operate the instance
 * (its data shape, the conventions of its type, its linked flows and files, how to change it).
 *
 * With a real provider (the one named, else the first configured) a model writes it from the
 * instance's summary. With the offline provider (named, or when none is configured) the answer is
 * a deterministic template filled from the same summary (`offline: true` in the answer): the same
 * instance at the same version always gives the same text. Nothing is recorded: generating a
 * playbook is a read (viewers may).
 */
export interface PlaybookPorts {
  eventStore: EventStore;
  llm: LlmGateway;
  clock: Clock;
  logger: Logger;
  newId(): string;
}

export interface Playbook {
  markdown: string;
  provider: LlmProviderId;
  model: string;
  offline: boolean;
  usage: { promptTokens: number; completionTokens: number; totalTokens: number; cost: number } | null;
}

export const PLAYBOOK_MAX_TOKENS = 2_000;
/** How much of the data a model is shown (the rest is summarised). */
const SAMPLE_CHARS = 6_000;

interface LinkedFlow {
  flowId: string;
  name: string | null;
}

async function linkedFlowsOf(store: EventStore, state: AppInstanceState): Promise<LinkedFlow[]> {
  return Promise.all(
    state.linkedFlowIds.map(async (flowId) => {
      const flow = (await loadState(store, flowStreamId(flowId), flowDecider)).state;
      return { flowId, name: flow.exists && !flow.deleted ? flow.name : null };
    }),
  );
}

/** A short, deterministic description of what the data holds now (counts, ids). */
export function dataSummary(state: AppInstanceState): string[] {
  const data = state.data;
  const lines: string[] = [];
  const arr = (v: Json | undefined) => (Array.isArray(v) ? v : []);
  if (state.type === 'kanban') {
    const columns = arr(data.columns) as JsonObject[];
    const cards = arr(data.cards) as JsonObject[];
    lines.push(`${columns.length} column(s) and ${cards.length} card(s).`);
    for (const c of columns) {
      const count = cards.filter((card) => card.status === c.id).length;
      lines.push(`- column \`${String(c.id)}\` "${String(c.title)}": ${count} card(s)${typeof c.wipLimit === 'number' ? `, WIP limit ${c.wipLimit}` : ''}`);
    }
  } else if (state.type === 'job_tracker') {
    const apps = arr(data.applications) as JsonObject[];
    lines.push(`${apps.length} application(s).`);
    const byStatus = new Map<string, number>();
    for (const a of apps) byStatus.set(String(a.status), (byStatus.get(String(a.status)) ?? 0) + 1);
    for (const [status, n] of [...byStatus.entries()].sort()) lines.push(`- ${status}: ${n}`);
  }
  return lines;
}

function schemaOutline(schema: JsonObject, indent = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set((schema.required ?? []) as string[]);
  const lines: string[] = [];
  for (const [name, sub] of Object.entries(props)) {
    const item = sub.type === 'array' ? (sub.items as JsonObject | undefined) : undefined;
    const kind = sub.anyOf ? (sub.anyOf as JsonObject[]).map((s) => String(s.type)).join(' | ') : sub.enum ? (sub.enum as Json[]).map((v) => JSON.stringify(v)).join(' | ') : String(sub.type ?? 'any');
    lines.push(`${indent}- \`${name}\`${required.has(name) ? ' (required)' : ''}: ${item ? `array of ${String(item.title ?? item.type ?? 'items')}` : kind}`);
    if (item?.properties) lines.push(...schemaOutline(item, indent + '  '));
  }
  return lines;
}

function patchExample(state: AppInstanceState): string {
  if (state.type === 'kanban') {
    return [
      'Move the first card to the column `done` (JSON Patch, `Content-Type: application/json-patch+json`):',
      '',
      '```json',
      '[{ "op": "test", "path": "/cards/0/id", "value": "<card id>" }, { "op": "replace", "path": "/cards/0/status", "value": "done" }]',
      '```',
      '',
      'Add a card: `[{ "op": "add", "path": "/cards/-", "value": { "id": "c-42", "title": "…", "status": "todo", "labels": [], "assignee": null, "due": null, "order": 10 } }]`.',
    ].join('\n');
  }
  return [
    'Record an interview (JSON Patch, `Content-Type: application/json-patch+json`):',
    '',
    '```json',
    '[{ "op": "test", "path": "/applications/0/id", "value": "<application id>" }, { "op": "replace", "path": "/applications/0/status", "value": "interviewing" }]',
    '```',
    '',
    'Add an application: `[{ "op": "add", "path": "/applications/-", "value": { "id": "a-7", "company": "…", "position": "…", "status": "applied", "appliedAt": "2026-01-31" } }]`.',
  ].join('\n');
}

/** The offline provider's playbook: a template over the instance (deterministic). */
export function templatePlaybook(state: AppInstanceState, flows: LinkedFlow[]): string {
  const type = APP_INSTANCE_TYPES[state.type];
  const base = `/api/app-instances/${state.instanceId}`;
  const sections = [
    `# Playbook: ${state.name}`,
    '',
    `You operate the app instance \`${state.instanceId}\`, a **${type.title}** (type \`${state.type}\`) at version ${state.version}. ${type.description}`,
    '',
    '## What it holds now',
    '',
    ...dataSummary(state),
    '',
    '## Data shape',
    '',
    `The data is one JSON object checked against the type's JSON Schema on every write; a change that breaks it is refused (400 \`DATA_SCHEMA_VIOLATION\` naming the path).`,
    '',
    ...schemaOutline(type.schema),
    '',
    '## Conventions',
    '',
    ...type.conventions.map((c) => `- ${c}`),
    '',
    '## How to read and change it',
    '',
    `1. Read: \`GET ${base}\`; the \`ETag\` is the version.`,
    `2. Change: \`PATCH ${base}/data\` with a JSON Merge Patch (RFC 7396, the default) or a JSON Patch (RFC 6902, \`Content-Type: application/json-patch+json\`), sending \`If-Match\` with the version you read.`,
    '3. On 412 `PRECONDITION_FAILED` someone changed the same place since you read: read again, decide again. Changes to other places land without a retry.',
    '4. Use a JSON Patch `test` operation on an item\'s `id` before changing it by index.',
    '',
    patchExample(state),
    '',
    '## Linked flows',
    '',
    ...(flows.length === 0 ? ['No flow is linked; link one with `PUT` (`linkedFlowIds`).'] : flows.map((f) => `- ${f.name ? `"${f.name}"` : '(not found)'} \`${f.flowId}\`: run it with \`POST /api/flows/${f.flowId}/run\`; see its last run with \`GET ${base}/flows\`.`)),
    '',
    '## Files',
    '',
    ...(state.files.length === 0 ? ['No files.'] : state.files.map((f) => `- \`${f.path}\` (${f.contentType}, ${f.size} bytes)`)),
    ...(state.files.length === 0 ? [] : ['', `Download links expire; get fresh ones with \`POST ${base}/files/re-sign\`.`]),
    '',
    '## Reporting',
    '',
    `After each piece of work add a short note to the conversation: \`POST ${base}/messages\` \`{"role": "assistant", "content": "…"}\`.`,
    '',
  ];
  return sections.join('\n');
}

function promptOf(state: AppInstanceState, flows: LinkedFlow[]): string {
  let sample = JSON.stringify(state.data, null, 1);
  if (sample.length > SAMPLE_CHARS) sample = `${sample.slice(0, SAMPLE_CHARS)}\n… (truncated)`;
  return [
    'Write a playbook in Markdown for an autonomous worker agent that operates the app instance below through the HTTP API.',
    'Cover: what the instance is for, its data shape, the conventions to keep, how to read and change the data safely (If-Match, JSON Patch / Merge Patch), when to run the linked flows, and how to report work in the conversation. Be concrete and brief. Answer with the Markdown only.',
    '',
    'A template with the facts follows; improve on it, keep every fact:',
    '',
    templatePlaybook(state, flows),
    '',
    'Current data (sample):',
    '```json',
    sample,
    '```',
  ].join('\n');
}

export async function generatePlaybook(ports: PlaybookPorts, context: CommandContext, caller: LlmCaller, state: AppInstanceState, request: { provider?: LlmProviderId; model?: string }): Promise<Playbook> {
  const flows = await linkedFlowsOf(ports.eventStore, state);
  // The rule every context shares (LlmGateway.defaultModel): the named provider, else the first configured.
  const chosen = request.provider ? { provider: request.provider, model: ports.llm.defaultModelOf(request.provider) } : await ports.llm.defaultModel(caller);
  const provider = chosen.provider;
  if (provider === 'offline') return { markdown: templatePlaybook(state, flows), provider: 'offline', model: 'template', offline: true, usage: null };
  const model = request.model ?? chosen.model;
  if (!model) {
    throw new DomainError('VALIDATION_FAILED', `${provider} has no default model: name one`, 'invalid', { fields: [{ field: 'body.model', message: `${provider} has no default model: name one` }] });
  }
  const llm = await ports.llm.providerFor(caller, provider);
  await assertWithinBudget({ eventStore: ports.eventStore, clock: ports.clock }, caller, provider);
  const result = await llm.complete({
    model,
    maxTokens: PLAYBOOK_MAX_TOKENS,
    messages: [
      { role: 'system', content: 'You write operating playbooks for software agents. Markdown only.' },
      { role: 'user', content: promptOf(state, flows) },
    ],
  });
  if (caller.orgId && result.cost > 0) {
    try {
      await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId: `app-instance-playbook:${ports.newId()}` });
    } catch (err) {
      ports.logger.error({ err, orgId: caller.orgId, cost: result.cost }, 'LLM spend not recorded');
    }
  }
  const markdown = result.text.trim() || templatePlaybook(state, flows);
  return {
    markdown,
    provider,
    model: result.model,
    offline: false,
    usage: { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens, totalTokens: result.usage.totalTokens, cost: result.cost },
  };
}
