import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiClient, ApiError, backoffMs, isTransient, sleep } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { EXIT, usageError } from '../lib/errors.js';
import { table, type Output } from '../lib/output.js';
import { preview } from '../lib/run-events.js';
import { positiveInt } from './flows.js';

/**
 * `flowctl workflows …`: durable workflows (docs/workflows.md). Every call goes through `ApiClient`;
 * writes that may be retried carry what makes them idempotent (a client-chosen workflow id for
 * `start`, a `requestId` for `signal`), so a network blip never starts or signals twice.
 */

/** One event of `GET /workflows/{id}/history`. */
export interface WorkflowEvent {
  eventId: number;
  type: string;
  data: any;
  occurredAt: string;
  actorId: string | null;
}

const STATUSES = ['CREATED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELED', 'TERMINATED', 'TIMED_OUT'];
/** The events that close an execution, and the status each leaves. */
const CLOSING: Record<string, string> = {
  WorkflowCompleted: 'COMPLETED',
  WorkflowContinuedAsNew: 'COMPLETED',
  WorkflowFailed: 'FAILED',
  WorkflowCanceled: 'CANCELED',
  WorkflowTerminated: 'TERMINATED',
  WorkflowTimedOut: 'TIMED_OUT',
};
const isClosed = (status: string) => status !== 'CREATED' && status !== 'RUNNING' && status !== 'PAUSED';
/** 0 when the workflow completed, 5 when it failed, was canceled or terminated, or timed out (as `run`). */
export const exitForWorkflow = (status: string) => (status === 'COMPLETED' ? EXIT.OK : EXIT.RUN_NOT_COMPLETED);

const path = (id: string, rest = '') => `/workflows/${encodeURIComponent(id)}${rest}`;

/** `k=v` pairs into an object; v is JSON when it parses (`n=3`, `ok=true`), else the text itself. */
function keyValue(flag: string) {
  return (pair: string, previous: Record<string, unknown> = {}) => {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`${flag} expects key=value, not "${pair}"`);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
    return { ...previous, [pair.slice(0, eq)]: value };
  };
}

/** `--payload`: JSON, or `@file` holding JSON. */
function parsePayload(raw: string): unknown {
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (err) {
      throw usageError(`cannot read ${raw.slice(1)}: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(`--payload must be JSON (a string needs its quotes: '"yes"'): ${(err as Error).message}`);
  }
}

/** Retries a call through network blips and a restarting service (the call must be idempotent). */
async function retrying<T>(call: () => Promise<T>, onRetryError?: (err: unknown, attempt: number) => T | undefined): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt > 0 && onRetryError) {
        const recovered = onRetryError(err, attempt);
        if (recovered !== undefined) return recovered;
      }
      if (!isTransient(err) || attempt >= 8) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

/** Node labels from the definition in `WorkflowCreated`, for display. */
class NodeNames {
  private readonly names = new Map<string, string>();
  learn(event: WorkflowEvent) {
    if (event.type !== 'WorkflowCreated') return;
    this.names.clear();
    for (const n of event.data?.definition?.nodes ?? []) {
      const label = n.data?.label ?? n.data?.name;
      this.names.set(n.id, `${label ? `"${label}" ` : ''}${n.id} (${n.data?.nodeType ?? n.type})`);
    }
  }
  of(nodeId: string | null | undefined) {
    return nodeId ? (this.names.get(nodeId) ?? nodeId) : '-';
  }
}

const ms = (v: unknown) => (typeof v === 'number' ? ` in ${Math.round(v)} ms` : '');
const why = (d: any) => (d.reason ? `: ${d.reason}` : '');

/** One line per history event. */
export function describeWorkflowEvent(event: WorkflowEvent, names: NodeNames): string {
  const d = event.data ?? {};
  switch (event.type) {
    case 'WorkflowCreated':
      return `workflow created (flow ${d.flowId} v${d.flowVersion}, execution ${d.execution}, ${d.definition?.nodes?.length ?? 0} nodes)`;
    case 'WorkflowStarted':
      return 'workflow started';
    case 'WorkflowNodeStarted':
      return `node ${names.of(d.nodeId)} started${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}`;
    case 'WorkflowNodeCompleted':
      return `node ${names.of(d.nodeId)} completed${ms(d.executionTime)}: ${preview(d.output)}`;
    case 'WorkflowNodeFailed':
      return `node ${names.of(d.nodeId)} failed${ms(d.executionTime)}: ${d.error?.code ?? ''} ${d.error?.message ?? ''}`.trimEnd();
    case 'WorkflowNodeSkipped':
      return `node ${names.of(d.nodeId)} skipped: ${d.reason}`;
    case 'WorkflowNodesInterrupted':
      return `nodes interrupted (worker ${d.previousWorkerId} lost): ${(d.nodeIds ?? []).join(', ')}`;
    case 'WorkflowStateSet':
      return `state set by ${names.of(d.nodeId)}: ${preview(d.values)}`;
    case 'SignalReceived':
      return `signal ${d.name} received${d.payload !== null && d.payload !== undefined ? `: ${preview(d.payload)}` : ''}`;
    case 'SignalDelivered':
      return `signal delivered to ${names.of(d.nodeId)}`;
    case 'TimerScheduled':
      return `timer ${d.name} (${d.kind}) scheduled for ${d.fireAt}`;
    case 'TimerFired':
      return `timer fired${typeof d.lateMs === 'number' ? ` (${d.lateMs} ms late)` : ''}`;
    case 'TimerCanceled':
      return `timer canceled${why(d)}`;
    case 'WorkflowPaused':
      return `workflow paused${why(d)}`;
    case 'WorkflowResumed':
      return `workflow resumed${why(d)}`;
    case 'WorkflowCancelRequested':
      return `cancel requested${why(d)}`;
    case 'WorkflowCanceled':
      return `workflow canceled${why(d)}`;
    case 'WorkflowTerminated':
      return `workflow terminated${why(d)}`;
    case 'WorkflowCompleted':
      return `workflow completed: ${preview(d.result)}`;
    case 'WorkflowFailed':
      return `workflow failed: ${d.code} ${d.message ?? ''}`.trimEnd();
    case 'WorkflowTimedOut':
      return `workflow timed out after ${d.timeoutMs} ms`;
    case 'WorkflowContinuedAsNew':
      return `continued as new workflow ${d.newWorkflowId}`;
    default:
      return event.type;
  }
}

/**
 * The workflow's events in order after `afterEventId`. With `follow`, long-polls
 * (`wait=true`) until an execution closes (and the events recorded with its closing are read);
 * without, stops at the end of what is there. Network blips and restarts are waited out; the
 * position is the event id, so nothing is skipped or repeated.
 */
export async function* workflowEvents(api: ApiClient, workflowId: string, options: { afterEventId?: number; follow?: boolean } = {}): AsyncGenerator<WorkflowEvent> {
  let after = options.afterEventId ?? -1;
  let closed = false;
  let failures = 0;
  for (;;) {
    let page: { events: WorkflowEvent[]; lastEventId: number; hasMore: boolean };
    try {
      const wait = options.follow && !closed;
      page = await api.get(path(workflowId, '/history'), {
        query: { afterEventId: after, limit: 1000, ...(wait && { wait: 'true', waitMs: 25_000 }) },
        timeoutMs: 40_000,
      });
      failures = 0;
    } catch (err) {
      if (!isTransient(err) || ++failures > 60) throw err;
      await sleep(backoffMs(failures));
      continue;
    }
    for (const event of page.events) {
      if (event.eventId <= after) continue;
      after = event.eventId;
      if (event.type === 'WorkflowCreated') closed = false;
      if (CLOSING[event.type]) closed = true;
      yield event;
    }
    if (page.hasMore) continue;
    if (!options.follow || closed) return;
  }
}

/** Prints events (a line each, JSON lines with --json) and returns the final status seen, if any. */
async function printEvents(out: Output, events: AsyncIterable<WorkflowEvent>, from: { execution?: number } = {}): Promise<string | null> {
  const names = new NodeNames();
  let final: string | null = null;
  // With `from.execution`, the events of earlier executions of a reused id are read but not shown.
  let showing = from.execution === undefined;
  for await (const event of events) {
    names.learn(event);
    if (event.type === 'WorkflowCreated') {
      final = null;
      if (from.execution !== undefined) showing = event.data?.execution === from.execution;
    }
    if (CLOSING[event.type]) final = CLOSING[event.type];
    if (!showing) continue;
    out.line(event, () => `${String(event.occurredAt).slice(11, 23)}  #${String(event.eventId).padEnd(3)} ${describeWorkflowEvent(event, names)}`);
  }
  return final;
}

const when = (iso: unknown) => (typeof iso === 'string' ? iso.slice(0, 19).replace('T', ' ') : '-');

function describeWorkflow(wf: any): string[] {
  const lines = [
    `Workflow ${wf.id}  ${wf.status}  (flow ${wf.flowId} v${wf.flowVersion}, execution ${wf.execution})`,
    `created ${when(wf.createdAt)}  started ${when(wf.startedAt)}  closed ${when(wf.closedAt)}  ${wf.historyLength} events`,
  ];
  if (wf.waitingOn) lines.push(`waiting on ${wf.waitingOn.kind} ${wf.waitingOn.name ?? ''}${wf.waitingOn.nodeId ? ` (node ${wf.waitingOn.nodeId})` : ''} since ${when(wf.waitingOn.since)}`.replace(/\s+/g, ' '));
  if (wf.status === 'COMPLETED') lines.push(`result: ${preview(wf.result)}`);
  if (wf.error) lines.push(`error: ${wf.error.code ?? ''} ${wf.error.message ?? ''}`.trimEnd());
  if (wf.continuedAs) lines.push(`continued as ${wf.continuedAs}`);
  if (wf.continuedFrom) lines.push(`continued from ${wf.continuedFrom}`);
  if (wf.historyWarning) lines.push(`warning: ${wf.historyWarning}`);
  lines.push(`input: ${preview(wf.input)}`, `state: ${preview(wf.state)}`);
  if (Object.keys(wf.searchAttributes ?? {}).length) lines.push(`search attributes: ${preview(wf.searchAttributes)}`);
  if (wf.pendingSignals?.length) lines.push(`pending signals: ${wf.pendingSignals.map((p: any) => p.name).join(', ')}`);
  for (const n of wf.nodes ?? []) {
    const extra = n.status === 'completed' ? `: ${preview(n.output)}` : n.error ? `: ${n.error.code ?? ''} ${n.error.message ?? ''}`.trimEnd() : '';
    lines.push(`  node ${n.nodeId}  ${n.nodeType ?? ''}  ${n.status}${n.attempts > 1 ? ` (${n.attempts} attempts)` : ''}${extra}`);
  }
  const pending = (wf.timers ?? []).filter((t: any) => t.status === 'pending');
  for (const t of pending) lines.push(`  timer ${t.name} (${t.kind}) fires ${t.fireAt}`);
  return lines;
}

export function registerWorkflowCommands(program: Command) {
  const workflows = program.command('workflows').description('start, watch, signal, query and control durable workflows');

  workflows
    .command('list')
    .description('your workflows, newest first; --query takes the filter language (docs/workflows.md)')
    .option('--status <status>', `only this status (${STATUSES.join(', ')})`, (v) => v.toUpperCase())
    .option('--flow <flowId>', 'only workflows of this flow')
    .option('-q, --query <filter>', `a filter, e.g. "ExecutionStatus = 'RUNNING' AND customer = 'acme'"`)
    .option('--limit <n>', 'at most this many', (v) => positiveInt(v, '--limit'), 100)
    .action(async (options: { status?: string; flow?: string; query?: string; limit: number }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      if (options.query !== undefined && (options.status || options.flow)) {
        throw usageError("--query cannot be combined with --status or --flow: write them into the query (ExecutionStatus = 'RUNNING' AND FlowId = '…')");
      }
      const items: any[] = [];
      let cursor: string | undefined;
      try {
        do {
          const limit = Math.min(100, options.limit - items.length);
          const page =
            options.query !== undefined
              ? await api.get('/workflows/search', { query: { query: options.query, limit, cursor } })
              : await api.get('/workflows', { query: { status: options.status, flowId: options.flow, limit, cursor } });
          items.push(...page.items);
          cursor = page.nextCursor ?? undefined;
        } while (cursor && items.length < options.limit);
      } catch (err) {
        // Point at the place the filter went wrong.
        const position = err instanceof ApiError && err.code === 'INVALID_QUERY' ? (err.details as { position?: unknown } | undefined)?.position : undefined;
        if (typeof position === 'number' && options.query !== undefined) out.note(`  ${options.query}\n  ${' '.repeat(position)}^`);
        throw err;
      }
      out.result({ items }, () =>
        items.length === 0
          ? 'No workflows.'
          : table(
              ['ID', 'STATUS', 'FLOW', 'STARTED', 'CLOSED'],
              items.map((w) => [w.id, w.status, w.flowId, when(w.startedAt ?? w.createdAt), when(w.closedAt)]),
            ),
      );
    });

  workflows
    .command('get <workflowId>')
    .description('show a workflow: status, what it waits on, state, nodes, pending timers')
    .action(async (workflowId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const { workflow } = await api.get(path(workflowId));
      out.result({ workflow }, () => describeWorkflow(workflow));
    });

  workflows
    .command('start <flowId>')
    .description('start a workflow of a flow (with --watch: follow it until it closes; exit 0 when it completed, 5 otherwise)')
    .option('--id <workflowId>', 'the workflow id (default: wf_<random>)')
    .option('-i, --input <key=value>', 'an input (repeatable; the value is JSON when it parses, else text)', keyValue('--input'))
    .option('-a, --attr <key=value>', 'a search attribute (repeatable; string, number or boolean)', keyValue('--attr'))
    .option('--watch', 'print its events as they happen until it closes')
    .action(async (flowId: string, options: { id?: string; input?: Record<string, unknown>; attr?: Record<string, unknown>; watch?: boolean }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      // The id is chosen here, so a retried create is recognized (409 on the id we just created).
      const workflowId = options.id ?? `wf_${randomUUID()}`;
      const body = { flowId, workflowId, input: options.input ?? {}, ...(options.attr && { searchAttributes: options.attr }) };
      let recovered = false;
      const created = await retrying(
        () => api.post('/workflows', body),
        (err) => {
          if (err instanceof ApiError && err.code === 'WORKFLOW_ALREADY_STARTED') {
            recovered = true;
            return null;
          }
          return undefined;
        },
      );
      const workflow = recovered ? (await api.get(path(workflowId))).workflow : created.workflow;
      if (!options.watch) {
        out.result({ workflow }, () => [`Started workflow ${workflow.id} (${workflow.status}).`, `Watch it with: flowctl workflows history ${workflow.id} --follow`]);
        return;
      }
      out.note(`Workflow ${workflow.id} of flow ${flowId}`);
      const final = await printEvents(out, workflowEvents(api, workflow.id, { follow: true }), { execution: workflow.execution });
      const { workflow: view } = await retrying(() => api.get(path(workflow.id)));
      const status = view?.execution === workflow.execution ? view.status : (final ?? 'unknown');
      // With --json the stream is the events only (the closing event holds the result or error).
      if (!out.json) {
        process.stdout.write(
          [
            `Workflow ${workflow.id} ${status}.`,
            ...(status === 'COMPLETED' ? [`result: ${preview(view?.result)}`] : []),
            ...(view?.error ? [`error: ${view.error.code ?? ''} ${view.error.message ?? ''}`.trimEnd()] : []),
          ].join('\n') + '\n',
        );
      }
      process.exitCode = exitForWorkflow(status);
    });

  workflows
    .command('signal <workflowId> <name>')
    .description('send a signal (recorded once, even when the call is retried)')
    .option('-p, --payload <json|@file>', 'the payload, JSON', parsePayload)
    .option('--request-id <id>', 'deduplication id (default: a random one, reused on retries)')
    .action(async (workflowId: string, name: string, options: { payload?: unknown; requestId?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      const requestId = options.requestId ?? `flowctl-${randomUUID()}`;
      const reply = await retrying(() => api.post(path(workflowId, '/signal'), { name, requestId, ...(options.payload !== undefined && { payload: options.payload }) }));
      out.result({ workflowId, name, requestId, signalId: reply.signalId, recorded: reply.recorded, status: reply.status }, () =>
        reply.recorded ? `Signal ${name} sent to ${workflowId} (${reply.status}).` : `Signal ${name} was already recorded for ${workflowId} (request ${requestId}).`,
      );
    });

  workflows
    .command('query <workflowId> <name>')
    .description('ask a workflow: state, status, pendingSignals, or a key of its state (answered from its log)')
    .action(async (workflowId: string, name: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const reply = await retrying(() => api.post(path(workflowId, '/query'), { name }));
      out.result({ workflowId, name, result: reply.result, status: reply.status }, () => JSON.stringify(reply.result, null, 2) ?? 'null');
    });

  workflows
    .command('cancel <workflowId>')
    .description('cancel (in-flight nodes aborted, ends CANCELED); --terminate ends it at once (TERMINATED)')
    .option('--reason <text>', 'why (recorded in the history)')
    .option('--terminate', 'end it at once instead of cooperatively')
    .action(async (workflowId: string, options: { reason?: string; terminate?: boolean }, command: Command) => {
      const { api, out } = contextOf(command);
      const { workflow } = await api.post(path(workflowId, '/cancel'), { terminate: Boolean(options.terminate), ...(options.reason && { reason: options.reason }) });
      out.result({ workflow }, () =>
        isClosed(workflow.status) ? `Workflow ${workflow.id} ${workflow.status}.` : `Cancel requested for ${workflow.id} (${workflow.status}); it ends CANCELED when its nodes stop.`,
      );
    });

  for (const [action, verb] of [
    ['pause', 'pause (no node starts until resume; a node in flight finishes)'],
    ['resume', 'resume a paused workflow (timers that came due fire now), or start a created one'],
  ] as const) {
    workflows
      .command(`${action} <workflowId>`)
      .description(verb)
      .option('--reason <text>', 'why (recorded in the history)')
      .action(async (workflowId: string, options: { reason?: string }, command: Command) => {
        const { api, out } = contextOf(command);
        const { workflow } = await api.post(path(workflowId, `/${action}`), options.reason ? { reason: options.reason } : {});
        out.result({ workflow }, () => `Workflow ${workflow.id} ${workflow.status}.`);
      });
  }

  workflows
    .command('history <workflowId>')
    .description("print a workflow's events (with --follow: as they happen until it closes; exit 0 when it completed, 5 otherwise)")
    .option('--after <eventId>', 'only events after this one', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < -1) throw usageError(`--after must be -1 or more, not ${v}`);
      return n;
    })
    .option('-f, --follow', 'keep printing events until the workflow closes')
    .action(async (workflowId: string, options: { after?: number; follow?: boolean }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      // A closed workflow has nothing more to wait for (even when --after skips its closing event).
      const current = options.follow ? (await retrying(() => api.get(path(workflowId)))).workflow : null;
      const follow = Boolean(current && !isClosed(current.status));
      const final = await printEvents(out, workflowEvents(api, workflowId, { afterEventId: options.after ?? -1, follow }));
      if (options.follow) process.exitCode = exitForWorkflow(final ?? current.status);
    });
}
