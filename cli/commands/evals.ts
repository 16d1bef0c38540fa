import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ApiClient, RequestBody, ResponseBody } from '../lib/api.js';
import { sleep } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { CliError, EXIT, usageError } from '../lib/errors.js';
import { table } from '../lib/output.js';
import { positiveInt } from './flows.js';

/**
 * `flowctl eval run <datasetId> --flow <id> [--against <version>] [--min <rate>]`: asks for an
 * evaluation (POST /evals/evaluations), follows its progress on stderr, prints the per-case table
 * and the per-version summary, and exits 1 when the evaluated version's pass rate is under --min
 * (or the evaluation failed), so a CI step can gate a flow change on it. `eval show` prints an
 * evaluation already asked for; `eval datasets` and `eval dataset-create` list and make datasets.
 */

type Evaluation = ResponseBody<'getEvaluation', 200>['evaluation'];
type Scorers = RequestBody<'startEvaluation'>['scorers'];

/** --min: a fraction (0.8) or a percentage (80%). */
function rateOf(value: string): number {
  const percent = value.trim().endsWith('%');
  const n = Number(percent ? value.trim().slice(0, -1) : value);
  const rate = percent ? n / 100 : n;
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) throw usageError(`--min must be a pass rate between 0 and 1 (or 0% to 100%), not ${value}`);
  return rate;
}

const versionOf = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw usageError(`a flow version is a whole number ≥ 0, not ${value}`);
  return n;
};

/** --scorers: a JSON array, inline or in a file; default: exact match against the expected output. */
function scorersOf(value: string | undefined): Scorers {
  if (value === undefined) return [{ type: 'exact' }] as Scorers;
  const text = existsSync(value) ? readFileSync(value, 'utf8') : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw usageError('--scorers must be a JSON array of scorers (inline or a file), e.g. [{"type":"exact"}]');
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw usageError('--scorers must be a non-empty JSON array');
  return parsed as Scorers;
}

const pct = (rate: number) => `${(rate * 100).toFixed(1)}%`;
const cell = (r: Evaluation['cases'][number]['a']) => (r ? [r.pass ? 'pass' : r.error ? `error ${r.error.code}` : 'fail', r.score.toFixed(2)] : ['', '']);

/** The table people read: one row per case, then one per version, then the differences. */
export function evaluationLines(e: Evaluation): string[] {
  const two = e.versions.length === 2;
  const [va, vb] = e.versions;
  const headers = ['CASE', `v${va.flowVersion}`, 'SCORE', ...(two ? [`v${vb.flowVersion}`, 'SCORE', 'CHANGE'] : [])];
  const rows = e.cases.map((c, i) => [String(i + 1), ...cell(c.a), ...(two ? [...cell(c.b), c.change ?? ''] : [])]);
  const summary = table(
    ['VERSION', 'PASSED', 'PASS RATE', 'SCORE', 'LATENCY', 'TOKENS', 'COST'],
    e.summaries.map((s) => [`v${s.flowVersion}`, `${s.passed}/${s.cases}`, pct(s.passRate), s.meanScore.toFixed(3), s.latencyMs.mean === null ? '' : `${Math.round(s.latencyMs.mean)} ms`, String(s.tokens + s.judgeTokens), `$${(s.cost + s.judgeCost).toFixed(4)}`]),
  );
  const lines = [`Evaluation ${e.id}: ${e.status} (${e.progress.done}/${e.progress.total})`, '', ...table(headers, rows), '', ...summary];
  if (e.differences) {
    const d = e.differences;
    lines.push('', `v${va.flowVersion} against v${vb.flowVersion}: pass rate ${d.passRate >= 0 ? '+' : ''}${pct(d.passRate)}, ${d.improved.length} improved, ${d.regressed.length} regressed`);
  }
  if (e.failure) lines.push('', `failed: ${e.failure.code} ${e.failure.message}`);
  return lines;
}

async function follow(api: ApiClient, evaluationId: string, note: (text: string) => void, timeoutMs: number): Promise<Evaluation> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  for (;;) {
    const { evaluation } = await api.data(api.client.GET('/evals/evaluations/{evaluationId}', { params: { path: { evaluationId } } }));
    if (evaluation.progress.done !== last) note(`${evaluation.progress.done}/${evaluation.progress.total} scored`);
    last = evaluation.progress.done;
    if (evaluation.status !== 'running') return evaluation;
    if (Date.now() > deadline) throw new CliError(`evaluation ${evaluationId} still running after ${timeoutMs / 1000} s (flowctl eval show ${evaluationId} reads it later)`, EXIT.ERROR, 'TIMEOUT');
    await sleep(500);
  }
}

/** Exit 1 when the evaluated version (a) passes fewer than `min` of the cases, or the evaluation failed or was cancelled. */
function gate(e: Evaluation, min: number | undefined): void {
  if (e.status === 'failed' || e.status === 'cancelled') process.exitCode = EXIT.ERROR;
  else if (min !== undefined && (e.summaries[0]?.passRate ?? 0) < min) {
    process.stderr.write(`flowctl: pass rate ${pct(e.summaries[0]?.passRate ?? 0)} is below --min ${pct(min)}\n`);
    process.exitCode = EXIT.ERROR;
  }
}

const listOf = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);

/** `eval datasets` and `eval dataset-create`: the datasets `eval run` takes. */
function registerDatasetCommands(evals: Command) {
  evals
    .command('datasets')
    .description("the workspace's datasets")
    .action(async (_options: unknown, command: Command) => {
      const { api, out } = contextOf(command);
      const items: Array<{ id: string; name: string; caseCount: number; updatedAt: string }> = [];
      let cursor: string | undefined;
      do {
        const page = await api.data(api.client.GET('/evals/datasets', { params: { query: { limit: 100, cursor } } }));
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      out.result({ items }, () => (items.length === 0 ? 'No datasets.' : table(['DATASET', 'NAME', 'CASES', 'UPDATED'], items.map((d) => [d.id, d.name, String(d.caseCount), d.updatedAt.slice(0, 19).replace('T', ' ')]))));
    });
  evals
    .command('dataset-create')
    .description('create a dataset from recorded runs (--from-runs: their inputs, their outputs as the expected ones) and/or a JSON Lines file (--jsonl)')
    .requiredOption('--name <name>', "the dataset's name")
    .option('--description <text>', 'what it is for')
    .option('--from-runs <processIds>', 'comma-separated run ids', listOf)
    .option('--jsonl <file>', 'one {"input": {...}, "expected": ...} per line')
    .action(async (options: { name: string; description?: string; fromRuns?: string[]; jsonl?: string }, command: Command) => {
      const { api, out } = contextOf(command);
      if (options.jsonl !== undefined && !existsSync(options.jsonl)) throw usageError(`--jsonl: no such file ${options.jsonl}`);
      const body = {
        name: options.name, ...(options.description !== undefined && { description: options.description }),
        ...(options.fromRuns && { fromRuns: options.fromRuns }), ...(options.jsonl !== undefined && { jsonl: readFileSync(options.jsonl, 'utf8') }),
      } as RequestBody<'createEvalDataset'>;
      const { dataset } = await api.data(api.client.POST('/evals/datasets', { body }));
      out.result({ dataset }, () => `Created dataset ${dataset.id} (${dataset.name}) with ${dataset.caseCount} case${dataset.caseCount === 1 ? '' : 's'}.`);
    });
}

export function registerEvalCommands(program: Command) {
  const evals = program.command('eval').description('evaluations of flow versions over datasets of cases');
  registerDatasetCommands(evals);
  evals
    .command('run <datasetId>')
    .description('evaluate a flow (its current version, or --flow-version) over a dataset, side by side with --against; prints the table; exit 1 under --min')
    .requiredOption('--flow <flowId>', 'the flow to evaluate')
    .option('--flow-version <n>', 'the flow version evaluated (default: the current one; --version is flowctl\'s own)', versionOf)
    .option('--against <n>', 'a second version run side by side as the baseline', versionOf)
    .option('--scorers <json|file>', 'JSON array of scorers (default [{"type":"exact"}])')
    .option('--min <rate>', 'exit 1 when the pass rate is below this (0.8 or 80%)', rateOf)
    .option('--concurrency <n>', 'cases run at the same time (1-16)', (v) => positiveInt(v, '--concurrency'))
    .option('--timeout <seconds>', 'give up waiting after this long', (v) => positiveInt(v, '--timeout'), 1800)
    .action(async (datasetId: string, options: { flow: string; flowVersion?: number; against?: number; scorers?: string; min?: number; concurrency?: number; timeout: number }, command: Command) => {
      const { api, out } = contextOf(command);
      const body = {
        datasetId, flowId: options.flow, scorers: scorersOf(options.scorers),
        ...(options.flowVersion !== undefined && { version: options.flowVersion }), ...(options.against !== undefined && { against: options.against }),
        ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
      } as RequestBody<'startEvaluation'>;
      const { evaluation: started } = await api.data(api.client.POST('/evals/evaluations', { body }));
      out.note(`evaluation ${started.id}: ${started.progress.total} runs`);
      const evaluation = await follow(api, started.id, (t) => out.note(t), options.timeout * 1000);
      out.result({ evaluation }, () => evaluationLines(evaluation));
      gate(evaluation, options.min);
    });
  evals
    .command('show <evaluationId>')
    .description('an evaluation: its progress, or its table when done')
    .option('--min <rate>', 'exit 1 when the pass rate is below this (0.8 or 80%)', rateOf)
    .action(async (evaluationId: string, options: { min?: number }, command: Command) => {
      const { api, out } = contextOf(command);
      const { evaluation } = await api.data(api.client.GET('/evals/evaluations/{evaluationId}', { params: { path: { evaluationId } } }));
      out.result({ evaluation }, () => evaluationLines(evaluation));
      if (evaluation.status !== 'running') gate(evaluation, options.min);
    });
}
