import ora, { type Ora } from 'ora';
import { ApiClient, backoffMs, isTransient, sleep } from './api.js';
import { CliError, EXIT } from './errors.js';
import { streamRunEvents } from './run-stream.js';

/** One event of a run as `GET /processes/{id}/events` lists it. */
export interface RunEvent {
  type: string;
  revision: number;
  data: any;
  actorId: string | null;
  occurredAt: string;
}

/** A pruned run's stream starts at RunHistoryPruned (retention), which is final too: it sums up a finished run. */
export const FINAL_EVENTS = new Set(['RunCompleted', 'RunFailed', 'RunStopped', 'RunTimedOut', 'RunHistoryPruned']);
const statusOfFinal: Record<string, string> = { RunCompleted: 'completed', RunFailed: 'failed', RunStopped: 'stopped', RunTimedOut: 'timed_out' };
export const finalStatusOf = (event: RunEvent): string => statusOfFinal[event.type] ?? event.data?.summary?.status ?? 'unknown';

/**
 * A run's events in order, from `fromRevision`, following it until its final event (or, with
 * `follow: false`, until the end of what is there). The log is read page by page by revision, so
 * nothing is skipped or repeated; a network blip or a restarting service is waited out.
 */
export async function* runEvents(api: ApiClient, processId: string, options: { fromRevision?: number; follow?: boolean; pollMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<RunEvent> {
  let next = options.fromRevision ?? 0;
  // Following: the live stream (SSE) when the service has it, polling the events otherwise.
  if (options.follow !== false) {
    for await (const event of streamRunEvents(api, processId, { fromRevision: next, signal: options.signal, isFinal: (e) => FINAL_EVENTS.has(e.type) })) {
      if (event === 'unsupported') break;
      next = event.revision + 1;
      yield event;
      if (FINAL_EVENTS.has(event.type)) return;
    }
    if (options.signal?.aborted) return;
  }
  let idle = 0;
  let failures = 0;
  for (;;) {
    if (options.signal?.aborted) return;
    let page: { events: RunEvent[]; nextCursor: string | null };
    try {
      page = (await api.data(
        api.client.GET('/processes/{processId}/events', { params: { path: { processId }, query: { cursor: next > 0 ? String(next) : undefined, limit: 100 } } }),
      )) as typeof page;
      failures = 0;
    } catch (err) {
      if (!isTransient(err) || ++failures > 60) throw err;
      await sleep(backoffMs(failures), options.signal);
      continue;
    }
    for (const event of page.events) {
      if (event.revision < next) continue;
      next = event.revision + 1;
      yield event;
      if (FINAL_EVENTS.has(event.type)) return;
    }
    if (page.nextCursor) continue;
    if (options.follow === false) return;
    idle = page.events.length ? 0 : idle + 1;
    // Poll quickly while things happen, then settle at one poll a second.
    await sleep(Math.min(1000, (options.pollMs ?? 150) * (1 + idle)), options.signal);
  }
}

/** Node labels from the run's definition (RunRequested), for display. */
export class NodeNames {
  private readonly names = new Map<string, string>();
  learn(event: RunEvent) {
    if (event.type !== 'RunRequested') return;
    for (const n of event.data?.definition?.nodes ?? []) {
      const label = n.data?.label ?? n.data?.name;
      const kind = n.data?.nodeType ?? n.type;
      this.names.set(n.id, `${label ? `"${label}" ` : ''}${n.id} (${kind})`);
    }
  }
  of(nodeId: string) {
    return this.names.get(nodeId) ?? nodeId;
  }
}

const ms = (v: unknown) => (typeof v === 'number' ? ` in ${Math.round(v)} ms` : '');
const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
export const preview = (v: unknown) => clip(typeof v === 'string' ? v : JSON.stringify(v) ?? 'null').replace(/\s+/g, ' ');

/** One line per event for `runs tail` (null: not worth a line). */
export function describeEvent(event: RunEvent, names: NodeNames): string | null {
  const d = event.data ?? {};
  switch (event.type) {
    case 'RunRequested':
      return `run requested for flow ${d.flowId} (${d.mode === 'node' ? `node ${d.nodeId}` : `${d.definition?.nodes?.length ?? 0} nodes`}, source ${d.source})`;
    case 'RunStarted':
      return `run started on ${d.workerId}`;
    case 'RunResumed':
      return `run resumed on ${d.workerId} after a crash (interrupted: ${(d.interruptedNodeIds ?? []).join(', ') || 'none'})`;
    case 'NodeStarted':
      return `node ${names.of(d.nodeId)} started${d.attempt > 1 ? ` (attempt ${d.attempt})` : ''}`;
    case 'NodeCompleted':
      return `node ${names.of(d.nodeId)} completed${ms(d.executionTime)}: ${preview(d.output)}`;
    case 'NodeFailed':
      return `node ${names.of(d.nodeId)} failed${ms(d.executionTime)}: ${d.error?.code ?? ''} ${d.error?.message ?? ''}`.trimEnd();
    case 'NodeSkipped':
      return `node ${names.of(d.nodeId)} skipped: ${d.reason}`;
    case 'RunStopRequested':
      return 'stop requested';
    case 'RunCompleted':
      return `run completed (${d.usage?.total_tokens ?? 0} tokens)`;
    case 'RunFailed':
      return `run failed: ${d.code} ${d.reason}`;
    case 'RunStopped':
      return 'run stopped';
    case 'RunTimedOut':
      return `run timed out: ${d.reason}`;
    case 'RunHistoryPruned':
      return `history pruned (${d.reason === 'age' ? `older than ${d.keepDays} days` : `beyond the last ${d.keepLast} runs of the flow`}): ${d.prunedEvents} earlier events deleted, the ${d.summary?.status ?? ''} run kept as its summary`;
    default:
      return event.type;
  }
}

/**
 * The live per-node display of `flowctl run`: a spinner for the running nodes (on a terminal) and
 * one lasting line per node as it finishes. Goes to stderr, so stdout carries only the result.
 */
export class RunProgress {
  private readonly spinner: Ora | null;
  private readonly running = new Set<string>();
  readonly names = new NodeNames();

  constructor(enabled: boolean) {
    this.spinner = enabled ? ora({ stream: process.stderr, text: 'queued' }) : null;
    if (this.spinner?.isEnabled) this.spinner.start(); // on a pipe: only the lasting per-node lines
  }

  private refresh() {
    if (!this.spinner) return;
    this.spinner.text = this.running.size ? `running ${[...this.running].map((id) => this.names.of(id)).join(', ')}` : 'waiting';
    if (!this.spinner.isSpinning && this.spinner.isEnabled) this.spinner.start();
  }

  on(event: RunEvent) {
    this.names.learn(event);
    const s = this.spinner;
    if (!s) return;
    const d = event.data ?? {};
    switch (event.type) {
      case 'RunStarted':
      case 'RunResumed':
        this.refresh();
        return;
      case 'NodeStarted':
        this.running.add(d.nodeId);
        this.refresh();
        return;
      case 'NodeCompleted':
        this.running.delete(d.nodeId);
        s.succeed(`${this.names.of(d.nodeId)} completed${ms(d.executionTime)}: ${preview(d.output)}`);
        this.refresh();
        return;
      case 'NodeFailed':
        this.running.delete(d.nodeId);
        s.fail(`${this.names.of(d.nodeId)} failed${ms(d.executionTime)}: ${d.error?.code ?? ''} ${d.error?.message ?? ''}`.trimEnd());
        this.refresh();
        return;
      case 'NodeSkipped':
        s.info(`${this.names.of(d.nodeId)} skipped: ${d.reason}`);
        this.refresh();
        return;
      default:
        if (FINAL_EVENTS.has(event.type)) s.stop();
    }
  }

  stop() {
    this.spinner?.stop();
  }
}

/** Exit code for a run's final status. */
export function exitForStatus(status: string): number {
  return status === 'completed' ? EXIT.OK : EXIT.RUN_NOT_COMPLETED;
}

export const runNotCompleted = (processId: string, status: string, reason?: string) =>
  new CliError(`run ${processId} ended ${status}${reason ? `: ${reason}` : ''}`, EXIT.RUN_NOT_COMPLETED, `RUN_${status.toUpperCase()}`);
