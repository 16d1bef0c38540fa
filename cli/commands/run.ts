import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiClient, backoffMs, isTransient, sleep, type RequestBody } from '../lib/api.js';
import { contextOf } from '../lib/context.js';
import { EXIT, usageError } from '../lib/errors.js';
import { describeEvent, exitForStatus, FINAL_EVENTS, finalStatusOf, NodeNames, RunProgress, runEvents } from '../lib/run-events.js';

/** `k=v`: v as JSON when it parses (`n=3`, `ok=true`, `o={"a":1}`), else the text itself. */
export function parseInput(pair: string, previous: Record<string, unknown> = {}): Record<string, unknown> {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw usageError(`--input expects key=value, not "${pair}"`);
  const key = pair.slice(0, eq);
  const raw = pair.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  return { ...previous, [key]: value };
}

function inputsOf(options: { input?: Record<string, unknown>; inputs?: string }): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (options.inputs) {
    const text = options.inputs.startsWith('@') ? readFileSync(options.inputs.slice(1), 'utf8') : options.inputs;
    try {
      base = JSON.parse(text);
    } catch (err) {
      throw usageError(`--inputs must be a JSON object (or @file): ${(err as Error).message}`);
    }
    if (!base || typeof base !== 'object' || Array.isArray(base)) throw usageError('--inputs must be a JSON object');
  }
  return { ...base, ...(options.input ?? {}) };
}

/** POSTs with one Idempotency-Key, retried through network blips: one run however many tries. */
async function startRun(api: ApiClient, flowId: string, inputs: Record<string, unknown>) {
  const key = `flowctl-${randomUUID()}`;
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.data(api.client.POST('/flows/{flowId}/run', { params: { path: { flowId } }, body: { inputs: inputs as RequestBody<'runFlow'>['inputs'], async: true }, headers: { 'Idempotency-Key': key } }));
    } catch (err) {
      if (!isTransient(err) || attempt >= 8) throw err;
      await sleep(backoffMs(attempt));
    }
  }
}

/** Registers `run` and `runs tail`; answers the `runs` command, which runs-history.ts extends. */
export function registerRunCommands(program: Command): Command {
  program
    .command('run <flowId>')
    .description('run a flow, showing each node as it runs, then the result')
    .option('-i, --input <key=value>', 'an input (repeatable; the value is JSON when it parses, else text)', parseInput)
    .option('--inputs <json|@file>', 'all inputs as one JSON object (--input entries are added on top)')
    .option('--async', 'queue the run and print its process id without waiting (add --watch to follow it anyway)')
    .option('--watch', 'follow the run live (the default unless --async)')
    .action(async (flowId: string, options: { input?: Record<string, unknown>; inputs?: string; async?: boolean; watch?: boolean }, command: Command) => {
      const { api, out, json } = contextOf(command);
      api.requireToken();
      const inputs = inputsOf(options);
      const started = await startRun(api, flowId, inputs);
      const processId = started.processId as string;
      if (options.async && !options.watch) {
        out.result({ processId, status: started.status ?? 'queued' }, () => [`Queued run ${processId}.`, `Follow it with: flowctl runs tail ${processId}`]);
        return;
      }
      out.note(`Run ${processId} of flow ${flowId}`);
      const progress = new RunProgress(!json);
      let final: string | null = null;
      try {
        for await (const event of runEvents(api, processId)) {
          progress.on(event);
          if (FINAL_EVENTS.has(event.type)) final = finalStatusOf(event);
        }
      } finally {
        progress.stop();
      }
      // The document types the run view loosely (an object): its fields are read as the service sends them.
      const { process: view } = (await api.data(api.client.GET('/processes/{processId}', { params: { path: { processId } } }))) as { process?: any };
      const status = (view?.status as string) ?? final ?? 'unknown';
      const started_ = view?.startedAt ? Date.parse(view.startedAt) : NaN;
      const finished = view?.finishedAt ? Date.parse(view.finishedAt) : NaN;
      const executionTime = Number.isFinite(started_) && Number.isFinite(finished) ? finished - started_ : null;
      out.result(
        { processId, flowId, status, executionTime, outputs: view?.outputs ?? {}, usage: view?.usage ?? null, error: view?.error ?? null, nodes: view?.nodes ?? [] },
        () => [
          `Run ${processId} ${status}${executionTime !== null ? ` in ${executionTime} ms` : ''}.`,
          ...(view?.error ? [`error: ${view.error.code ?? ''} ${view.error.reason ?? view.error.message ?? ''}`.trimEnd()] : []),
          'outputs:',
          ...JSON.stringify(view?.outputs ?? {}, null, 2).split('\n').map((l) => `  ${l}`),
        ],
      );
      process.exitCode = exitForStatus(status);
    });

  const runs = program.command('runs').description("list runs, show their logs and follow them");
  runs
    .command('tail <processId>')
    .description("print a run's events as they happen, until it ends (exit 0 when it completed, 5 otherwise)")
    .option('--from <revision>', 'start at this event number (0 = the beginning)', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) throw usageError(`--from must be 0 or more, not ${v}`);
      return n;
    })
    .option('--no-follow', 'print the events there are now and stop')
    .action(async (processId: string, options: { from?: number; follow: boolean }, command: Command) => {
      const { api, out } = contextOf(command);
      api.requireToken();
      const names = new NodeNames();
      let final: string | null = null;
      for await (const event of runEvents(api, processId, { fromRevision: options.from ?? 0, follow: options.follow })) {
        names.learn(event);
        if (FINAL_EVENTS.has(event.type)) final = finalStatusOf(event);
        const line = describeEvent(event, names);
        if (line === null) continue;
        out.line(event, () => `${event.occurredAt.slice(11, 23)}  #${String(event.revision).padEnd(3)} ${line}`);
      }
      if (final) process.exitCode = exitForStatus(final);
      else if (options.follow) process.exitCode = EXIT.ERROR;
    });
  return runs;
}
