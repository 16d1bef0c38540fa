import type { Command } from 'commander';
import type { ApiClient } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { usageError } from '../lib/errors.js';
import { table } from '../lib/output.js';
import { describeEvent, NodeNames, runEvents, type RunEvent } from '../lib/run-events.js';
import { positiveInt } from './flows.js';

/**
 * `runs list` and `runs logs`: runs that happened. The service lists runs two ways only, and
 * neither filters by status: a flow's runs (`GET /flows/{id}/processes`, newest first) and the
 * queued and running ones of the workspace (`GET /processes/running`). So `--status` is applied
 * here, page by page, and a finished status needs `--flow`. Both lists come from the read model:
 * a run just finished may show there a moment later (README "Execution semantics").
 */

const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'stopped', 'timed_out'];
const ACTIVE = new Set(['queued', 'running']);

type Run = { processId: string; flowId: string; status: string; source: string; requestedAt: string; startedAt: string | null; finishedAt: string | null; nodes: any[]; error: any };

function statusOf(value: string): string {
  const status = value.toLowerCase();
  if (!RUN_STATUSES.includes(status)) throw usageError(`--status must be one of ${RUN_STATUSES.join(', ')}, not "${value}"`);
  return status;
}

const durationOf = (r: Pick<Run, 'startedAt' | 'finishedAt'>) => {
  const ms = r.startedAt && r.finishedAt ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : NaN;
  return Number.isFinite(ms) ? `${ms} ms` : '';
};

/** Pages of one of the two lists until `limit` runs with the status are found or the list ends. */
async function listRuns(api: ApiClient, options: { flow?: string; status?: string; limit: number }): Promise<Run[]> {
  const found: Run[] = [];
  let cursor: string | undefined;
  do {
    const query = { limit: 100, cursor };
    const page = (options.flow
      ? await api.data(api.client.GET('/flows/{flowId}/processes', { params: { path: { flowId: options.flow }, query } }))
      : await api.data(api.client.GET('/processes/running', { params: { query } }))) as { items: Run[]; nextCursor: string | null };
    for (const run of page.items) if (!options.status || run.status === options.status) found.push(run);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && found.length < options.limit);
  return found.slice(0, options.limit);
}

export function registerRunHistoryCommands(runs: Command) {
  runs
    .command('list')
    .description("a flow's runs, newest first (--flow); without --flow, the queued and running runs of the workspace")
    .option('--flow <flowId>', 'the runs of this flow')
    .option('--status <status>', `only runs with this status (${RUN_STATUSES.join(', ')})`, statusOf)
    .option('--limit <n>', 'at most this many', (v) => positiveInt(v, '--limit'), 20)
    .action(async (options: { flow?: string; status?: string; limit: number }, command: Command) => {
      const { api, out } = contextOf(command);
      if (!options.flow && options.status && !ACTIVE.has(options.status)) {
        throw usageError(`--status ${options.status} needs --flow <flowId>: the service lists finished runs per flow only`);
      }
      const items = await listRuns(api, options);
      out.result({ items }, () =>
        items.length === 0
          ? 'No runs.'
          : table(
              ['PROCESS', ...(options.flow ? [] : ['FLOW']), 'STATUS', 'SOURCE', 'REQUESTED', 'DURATION'],
              items.map((r) => [r.processId, ...(options.flow ? [] : [r.flowId]), r.status, r.source, r.requestedAt.slice(0, 19).replace('T', ' '), durationOf(r)]),
            ),
      );
    });

  runs
    .command('logs <processId>')
    .description("a run's log: its events as runs tail prints them, then each node's status and whole output or error")
    .action(async (processId: string, _options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const { process: run } = (await api.data(api.client.GET('/processes/{processId}', { params: { path: { processId } } }))) as { process: Run & Record<string, any> };
      const events: RunEvent[] = [];
      for await (const event of runEvents(api, processId, { follow: false })) events.push(event);
      out.result({ process: run, events }, () => humanLog(run, events));
    });
}

/** The events, one line each (as `runs tail`), then node by node with whole outputs. */
function humanLog(run: Run & Record<string, any>, events: RunEvent[]): string[] {
  const names = new NodeNames();
  const lines = [`Run ${run.processId} of flow ${run.flowId}: ${run.status}${durationOf(run) ? ` in ${durationOf(run)}` : ''} (source ${run.source})`, ''];
  for (const event of events) {
    names.learn(event);
    const line = describeEvent(event, names);
    if (line !== null) lines.push(`${event.occurredAt.slice(11, 23)}  #${String(event.revision).padEnd(3)} ${line}`);
  }
  lines.push('', 'nodes:');
  for (const n of run.nodes) {
    const time = typeof n.executionTime === 'number' ? ` in ${n.executionTime} ms` : '';
    lines.push(`  ${names.of(n.nodeId)}: ${n.status}${time}${n.skipReason ? ` (${n.skipReason})` : ''}`);
    if (n.error) lines.push(`    error: ${n.error.code ?? ''} ${n.error.message ?? ''}`.trimEnd());
    if ('output' in n) lines.push(...(typeof n.output === 'string' ? n.output : JSON.stringify(n.output, null, 2)).split('\n').map((l: string) => `    ${l}`));
  }
  if (run.error) lines.push(`error: ${run.error.code ?? ''} ${run.error.reason ?? run.error.message ?? ''}`.trimEnd());
  else if (run.outputs) lines.push('outputs:', ...JSON.stringify(run.outputs, null, 2).split('\n').map((l) => `  ${l}`));
  return lines;
}
