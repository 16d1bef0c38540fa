import { randomUUID } from 'node:crypto';
import { sleep } from '../lib/sleep.js';
import { executeFlowCommand } from '../commands/flows.js';
import type { CommandContext } from '../commands/handle.js';
import { recordLlmSpend } from '../commands/orgs-budget.js';
import { ATTR, eventAttributes, inSpan, markError } from '../lib/tracing.js';
import { cachedRun, cachedRunPosition, executeRunCommand, executeRunCommands, flushPendingRun, loadRun } from '../commands/runs.js';
import {
  conditionalResultOf,
  conditionsOf,
  effectiveNodeData,
  evaluateCondition,
  graphIndex,
  isFinished,
  nextSteps,
  nodeInputs,
  nodeStateOf,
  PURE_NODE_KINDS,
  recordedResult,
  RunInputError,
  runStreamId,
  toHistoryUsage,
  type ConditionalResult,
  type NodeError,
  type NodeUsage,
  type NodeKind,
  type RunCommand,
  type RunNode,
  type RunState,
} from '../domain/runs/index.js';
import { openSecretVariables } from '../domain/flows/secrets.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore, PendingStream } from '../ports/event-store.js';
import { isLlmAbort, isLlmProviderError } from '../ports/llm.js';
import type { Logger } from '../ports/logger.js';
import type { Metrics } from '../ports/metrics.js';
import type { RunExecutor, RunSettings } from '../ports/runs.js';
import { answerPromptCondition, DEFAULT_NODE_KIND, fallbackKindOf, nodeKindFor, nodeKindsFor, type ExecutionContext, type NodeKindPorts } from './runs-kinds/index.js';
import { llmCapabilityFor } from './runs-llm.js';

/**
 * Executes one claimed run node by node, recording each step through the run aggregate. Used by
 * the run worker (async runs) and by the API process itself (synchronous runs, claimed in the
 * same decision that requested them). The aggregate decides everything that follows from a step
 * (skips, the run's end); this loop only does the I/O and bounds concurrency and time.
 */

/** Everything the executor and the node kinds use. */
export interface RunEnginePorts extends NodeKindPorts {
  eventStore: EventStore;
  clock: Clock;
  newId(): string;
  logger: Logger;
  settings: RunSettings;
  /** Node timings by kind (GET /metrics/performance); absent: not recorded. */
  metrics?: Metrics;
  /** The runs this service executes (the container makes one per service). */
  executions: RunExecutions;
}

/** One AbortController per run this service executes, so a stop reaches in-flight provider calls. */
export class RunExecutions {
  private readonly running = new Map<string, AbortController>();

  isExecuting(processId: string): boolean {
    return this.running.has(processId);
  }

  /** The controller of a run this service starts executing; null when it executes it already. */
  start(processId: string): AbortController | null {
    if (this.running.has(processId)) return null;
    const controller = new AbortController();
    this.running.set(processId, controller);
    return controller;
  }

  end(processId: string): void {
    this.running.delete(processId);
  }

  abort(processId: string, reason = 'stop requested'): void {
    this.running.get(processId)?.abort(new Error(reason));
  }
}

/** Between steps the loop re-reads the run at least this often, so a stop or a timeout recorded elsewhere is seen. */
const POLL_MS = 250;

/** The kinds' `sleep`: rejects with ABORTED (`stopped` says why) when the signal aborts. */
export const abortableSleep =
  (stopped: string) =>
  async (ms: number, signal: AbortSignal): Promise<void> => {
    if (!(await sleep(ms, signal))) throw new RunInputError('ABORTED', stopped);
  };

const RUN_STOPPED = 'the run was stopped';
const sleepUnlessStopped = abortableSleep(RUN_STOPPED);

function contextFor(clock: Clock, run: RunState, correlationId: string): CommandContext {
  return { actorId: null, orgId: run.orgId, workspaceId: run.workspaceId, correlationId, causationId: null, requestId: null, now: clock.now() };
}

/** The error a failed node records: TIMEOUT, ABORTED (`stopped` says why), or the error's own code. */
export function nodeErrorOf(err: unknown, signal: AbortSignal, timedOut: boolean, stopped: string): NodeError {
  if (timedOut) return { code: 'TIMEOUT', message: 'the node did not finish within NODE_TIMEOUT_MS' };
  if (signal.aborted || isLlmAbort(err)) return { code: 'ABORTED', message: stopped };
  if (isLlmProviderError(err)) return { code: err.code, message: err.message, provider: err.provider };
  if (err instanceof RunInputError || err instanceof DomainError) return { code: err.code, message: err.message };
  const e = err as { code?: unknown; message?: unknown };
  return { code: typeof e?.code === 'string' ? e.code : 'NODE_ERROR', message: String(e?.message ?? err) };
}

/** NODE_TIMEOUT_MS for one node: a signal that `abort` or the timeout aborts; `clear` when the node is done. */
export function nodeDeadline(abort: AbortSignal, timeoutMs: number) {
  const nodeTimeout = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    nodeTimeout.abort(new Error('timeout'));
  }, timeoutMs);
  return { signal: AbortSignal.any([abort, nodeTimeout.signal]), timedOut: () => timedOut, clear: () => clearTimeout(timer) };
}

/**
 * Executes a node's kind (`node.data` the effective data) and then its conditions; a prompt
 * condition asks the node's model, and what that costs is added to the node's usage.
 */
export async function executeNodeKind(ports: NodeKindPorts, kinds: Record<string, NodeKind>, node: RunNode, context: ExecutionContext & { userId: string | null }) {
  const result = await nodeKindFor(kinds, node).execute(node, context);
  let usage: NodeUsage = result.usage ?? { total_tokens: 0, cost: 0 };
  const conditionalResults: ConditionalResult[] = [];
  for (const [index, condition] of conditionsOf(node).entries()) {
    if (condition.usePrompt) {
      const answer = await answerPromptCondition(ports, { orgId: context.orgId, userId: context.userId }, node.data, condition, result.output, context.signal);
      usage = addUsage(usage, answer.usage);
      conditionalResults.push(conditionalResultOf(condition, index, answer.result));
    } else {
      conditionalResults.push(conditionalResultOf(condition, index, evaluateCondition(condition, result.output)));
    }
  }
  return { output: result.output ?? null, metadata: result.metadata ?? {}, usage, conditionalResults };
}

const addUsage = (a: NodeUsage, b: NodeUsage): NodeUsage => ({
  ...a,
  total_tokens: a.total_tokens + b.total_tokens,
  prompt_tokens: (a.prompt_tokens ?? 0) + (b.prompt_tokens ?? 0),
  completion_tokens: (a.completion_tokens ?? 0) + (b.completion_tokens ?? 0),
  cost: a.cost + b.cost,
});

/** The kind label of a node's metrics: its `data.nodeType` when that is a kind, else `default` (bounded label values). */
const metricKindOf = (data: { nodeType?: unknown }, kinds: Record<string, unknown>) =>
  typeof data.nodeType === 'string' && Object.hasOwn(kinds, data.nodeType) ? data.nodeType : 'default';

/**
 * Whether a node's execution reaches nothing outside this process: a pure kind, or an llm node
 * (and prompt conditions) on the offline provider. Only such a node may run before its start is
 * durable, so a crash can never leave an outside effect (a provider call, a webhook) whose start
 * the log does not show.
 */
export function runsLocally(kinds: Record<string, NodeKind>, node: RunNode, data: RunNode['data']): boolean {
  let kind = nodeKindFor(kinds, { ...node, data });
  if (kind === kinds[DEFAULT_NODE_KIND]) kind = fallbackKindOf(data, kinds);
  const offline = data.llm === 'offline';
  if (kind === kinds.llm) return offline;
  if (!PURE_NODE_KINDS.includes(kind)) return false;
  return offline || !conditionsOf({ ...node, data }).some((c) => c.usePrompt);
}

/**
 * Whether `work` settled (either way) within the tick it started in: by the event loop's next
 * turn. A local node that did is recorded with its start; one still running records its start then.
 */
export async function settlesThisTurn(work: Promise<unknown>): Promise<boolean> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return settled;
}

type NodeEnd = WithoutAt<Extract<RunCommand, { type: 'CompleteNode' | 'FailNode' }>>;
type WithoutAt<C> = C extends unknown ? Omit<C, 'at'> : never;

/**
 * The run executor port's adapter for the service whose worker id is `localWorkerId`; `ports` is
 * read on use (the container builds it after this), its `executions` are the runs this adapter
 * aborts and reports.
 */
export function createRunExecutor(ports: () => RunEnginePorts, localWorkerId: string): RunExecutor {
  return {
    localWorkerId,
    execute: (processId, workerId, pending) => executeRun(ports(), processId, workerId, pending),
    abort: (processId, reason) => ports().executions.abort(processId, reason),
    isExecuting: (processId) => ports().executions.isExecuting(processId),
  };
}

/**
 * `pending`: a run this process requested and claimed without appending (a sync run, see
 * PendingStream). Its events stay held while every node runs only in this process and finishes
 * within its tick, and are appended together (with the step that needs it) before a node's start
 * must be durable (a node that reaches outside, or a local node still running at its next turn),
 * before anything about the run is written to another stream (node history, LLM spend), and at
 * the latest when the run ends: a run of local nodes is ONE append. Until then the run is not in
 * the log, so nobody else can stop, sweep or take it over, and its held state is the whole truth.
 */
export async function executeRun(ports: RunEnginePorts, processId: string, workerId: string, pending?: PendingStream<RunState>): Promise<RunState> {
  const { eventStore, clock, logger, settings, executions } = ports;
  const held = () => pending !== undefined && !pending.flushed;
  const flush = async () => {
    if (held()) await flushPendingRun(eventStore, pending!);
  };
  const started = executions.start(processId);
  if (!started) {
    await flush();
    return loadRun(eventStore, processId);
  }
  const controller: AbortController = started;
  // One span per execution of a run, in the trace of the request that asked for it (the event's
  // traceparent, consumers/traced.ts); each node's span, and each LLM, tool and HTTP call in it, nests below.
  return inSpan('flow.run', { attributes: { [ATTR.runId]: processId } }, async (runSpan) => {
    const correlationId = randomUUID();
    // A run this process just requested and claimed (a sync run) is held, or in the handler's cache, as it stands.
    let run = (held() ? pending!.state : cachedRun(eventStore, processId)) ?? (await loadRun(eventStore, processId));
    // Decisions on a held run are added to what it holds (HandleOptions.pending) until it is appended.
    const onRun = { pending };
    const kinds = nodeKindsFor(ports);
    const llm = llmCapabilityFor(ports.llm, run.orgId, run.ownerId);
    const inFlight = new Map<string, Promise<void>>();
    const ctx = () => contextFor(clock, run, correlationId);
    // A replay's reused nodes answer from the original run, read once (a finished run never changes).
    const recording = run.replay ? await loadRun(eventStore, run.replay.of) : null;

    /**
     * Runs one node. Its start is recorded before it runs, except for a node that runs locally (see
     * runsLocally) and finishes within the tick it started in: its start and its end are decided in
     * turn and appended together, ONE append per node (the events stay NodeStarted + NodeCompleted
     * or NodeFailed). A local node still running at the next turn records its start then.
     */
    async function runNode(nodeId: string, known: RunState) {
      const node = graphIndex(known.definition).byId.get(nodeId)!;
      const data = effectiveNodeData(node, known);
      const kindLabel = metricKindOf(data, kinds);
      return inSpan(`flow.node ${kindLabel}`, { attributes: { [ATTR.runId]: processId, [ATTR.flowId]: run.flowId, [ATTR.nodeId]: nodeId, [ATTR.nodeKind]: kindLabel } }, async (nodeSpan) => {
        /** The span ends with the node's last event: its status, stream revision and (once appended) log position. */
        const noteEnd = (ended: { revision: number; position: number | null }, status: string, error?: string) => {
          if (!nodeSpan) return;
          nodeSpan.setAttributes({ [ATTR.status]: status, ...eventAttributes({ streamId: runStreamId(processId), revision: ended.revision, position: ended.position }) });
          if (error) markError(nodeSpan, error);
        };
        const reused = known.replay?.reuse.includes(nodeId) ? known.replay : null;
        let attempt: number | null = null;
        const recordStart = async () => {
          const started = await executeRunCommand(eventStore, ctx(), processId, { type: 'StartNode', workerId, nodeId }, { fromCache: true, ...onRun });
          // Durable before the node runs on: with whatever the run held before it, in the same append.
          await flush();
          attempt = nodeStateOf(started.state, nodeId)!.attempts;
        };
        // A reused node reaches nothing outside: it may finish before its start is durable, like a local one.
        if (!reused && !runsLocally(kinds, node, data)) await recordStart();
        const startedAt = clock.now().toISOString();
        /** The node's end, with its start when that is not recorded yet. */
        const recordEnd = (end: (attempt: number) => NodeEnd) => {
          if (attempt !== null) return executeRunCommand(eventStore, ctx(), processId, end(attempt), { fromCache: true, ...onRun });
          const endedAt = clock.now().toISOString();
          return executeRunCommands(
            eventStore,
            ctx(),
            processId,
            [() => ({ type: 'StartNode', workerId, nodeId, at: startedAt }), (s) => ({ ...end(nodeStateOf(s, nodeId)!.attempts), at: endedAt }) as RunCommand as never],
            { fromCache: true, ...onRun },
          );
        };
        const time = nodeDeadline(controller.signal, settings.NODE_TIMEOUT_MS);
        const signal = time.signal;
        const begin = performance.now();
        try {
          const execution = (async () => {
            if (reused) {
              const recorded = recordedResult(recording, reused, nodeId);
              if (!recorded) throw new RunInputError('REPLAY_RECORDING_GONE', `the replayed run ${reused.of} no longer holds the output of node ${nodeId}`);
              return recorded;
            }
            const inputs = nodeInputs(known.definition, known, nodeId);
            // Secret variables ({"$secret": …}) are opened here, in the process that runs the node, and nowhere else.
            const variables = openSecretVariables(inputs.variables, (box) => ports.secrets.open(box));
            const context = { ...inputs, variables, processId, flowId: run.flowId, orgId: run.orgId, workspaceId: run.workspaceId, userId: run.ownerId, signal, llm, sleep: sleepUnlessStopped };
            return executeNodeKind(ports, kinds, { ...node, data }, context);
          })();
          // refused (the run moved on): what ran so far stayed in this process
          if (attempt === null && !(await settlesThisTurn(execution))) await recordStart();
          let result: Awaited<typeof execution> | undefined;
          let failure: { err: unknown } | null = null;
          try {
            result = await execution;
          } catch (err) {
            failure = { err };
          }
          const executionTime = Math.round(performance.now() - begin);
          if (result) {
            const { output, metadata, usage, conditionalResults } = result;
            try {
              noteEnd(await recordEnd((attempt) => ({ type: 'CompleteNode', workerId, nodeId, attempt, output, metadata, conditionalResults, usage, executionTime })), 'completed');
            } catch (err) {
              if (!(err instanceof DomainError && err.code === 'OUTPUT_TOO_LARGE')) throw err;
              noteEnd(await recordEnd((attempt) => ({ type: 'FailNode', workerId, nodeId, attempt, error: { code: err.code, message: err.message }, executionTime })), 'failed', err.code);
            }
            ports.metrics?.observeNode(metricKindOf(data, kinds), executionTime / 1000, 'completed');
            await afterNode(nodeId, 'completed', output, null, usage, executionTime);
            return;
          }
          // A stop aborts in-flight calls; the node is not failed for it: the run ends as stopped.
          if (controller.signal.aborted && !time.timedOut()) return;
          const error = nodeErrorOf(failure!.err, signal, time.timedOut(), RUN_STOPPED);
          noteEnd(await recordEnd((attempt) => ({ type: 'FailNode', workerId, nodeId, attempt, error, executionTime })), 'failed', `${error.code}: ${error.message}`);
          ports.metrics?.observeNode(metricKindOf(data, kinds), executionTime / 1000, 'failed');
          await afterNode(nodeId, 'failed', null, `${error.code}: ${error.message}`, null, executionTime);
        } finally {
          time.clear();
        }
      });
    }

    /** Side effects outside the run stream; their failure never fails the run. */
    async function afterNode(nodeId: string, status: 'completed' | 'failed', output: unknown, error: string | null, usage: NodeUsage | null, executionTime: number) {
      const spends = usage !== null && usage.cost > 0 && run.orgId !== null;
      // Nothing names the run outside its stream before the run is in the log (outside the try: a
      // failed append is the run's failure, not a side effect's).
      if (spends || run.saveToHistory) await flush();
      try {
        if (usage && usage.cost > 0 && run.orgId) {
          await recordLlmSpend(eventStore, ctx(), { orgId: run.orgId, amountUsd: usage.cost, runId: processId, spendId: `${processId}:${nodeId}` });
        }
        if (run.saveToHistory) {
          await executeFlowCommand(eventStore, ctx(), run.flowId, {
            type: 'RecordNodeExecution', nodeId, entryId: ports.newId(), processId, status, output, error, usage: usage ? toHistoryUsage(usage) : null, executionTime,
          });
        }
      } catch (err) {
        logger.warn({ processId, nodeId, err: (err as Error).message }, 'recording a node execution outside the run failed');
      }
    }

    // RUN_TIMEOUT_MS counts from the request; the decider judges it (TimeOutRun) with the clock's time.
    const deadline = () => Date.parse(run.requestedAt) + settings.RUN_TIMEOUT_MS;
    // Between steps the run is what this process folded last (its own appends; a stop asked here):
    // no stream read per node. The stream itself is read at least every POLL_MS, so a stop or a timeout
    // recorded by another process is seen; an append on a stale state conflicts and reads anyway.
    let readAt = performance.now();
    const currentRun = async () => {
      // A held run is not in the log: there is nothing another process could have written to it.
      if (held()) return pending!.state;
      const cached = performance.now() - readAt < POLL_MS ? cachedRun(eventStore, processId) : undefined;
      if (cached) return cached;
      readAt = performance.now();
      return loadRun(eventStore, processId);
    };
    try {
      for (;;) {
        // Aborted (a stop, an agent's turn ending) while held: from here on the run is written and read like any other.
        if (controller.signal.aborted) await flush();
        run = await currentRun();
        // Ended meanwhile (timed out here or by a worker's sweep): in-flight calls are aborted like on a stop.
        if (run.exists && isFinished(run.status) && inFlight.size > 0) controller.abort(new Error(`the run is ${run.status}`));
        if (!run.exists || isFinished(run.status) || run.workerId !== workerId) break;
        if (clock.now().getTime() >= deadline()) {
          await executeRunCommand(eventStore, ctx(), processId, { type: 'TimeOutRun', timeoutMs: settings.RUN_TIMEOUT_MS }, onRun);
          continue;
        }
        if (run.stopRequested) controller.abort(new Error('stop requested'));
        const steps = nextSteps(run.definition, run);
        if (!controller.signal.aborted) {
          for (const nodeId of steps.ready) {
            if (inFlight.size >= settings.RUN_CONCURRENCY) break;
            if (inFlight.has(nodeId)) continue;
            const work = runNode(nodeId, run)
              .catch((err) => {
                // NODE_NOT_READY and friends: the run moved on (a stop, another worker); the next loop sees why.
                if (!(err instanceof DomainError)) throw err;
              })
              .finally(() => inFlight.delete(nodeId));
            inFlight.set(nodeId, work);
          }
        }
        if (inFlight.size === 0) {
          if (run.stopRequested) await executeRunCommand(eventStore, ctx(), processId, { type: 'ConfirmStop', workerId }, onRun);
          else if (steps.ready.length === 0) break;
          continue;
        }
        let timer: NodeJS.Timeout | undefined;
        const pause = Math.max(1, Math.min(POLL_MS, deadline() - clock.now().getTime()));
        await Promise.race([...inFlight.values(), new Promise((r) => (timer = setTimeout(r, pause)))]);
        clearTimeout(timer);
      }
    } catch (err) {
      logger.error({ processId, err: (err as Error).message }, 'run execution failed');
      await Promise.allSettled(inFlight.values());
      try {
        await executeRunCommand(eventStore, ctx(), processId, { type: 'FailRun', workerId, code: 'EXECUTION_ERROR', reason: (err as Error).message }, onRun);
      } catch {
        // Already finished, or the store is gone; a resume will look at it again.
      }
    } finally {
      try {
        // The run's end, and everything it held before it, in one append.
        await flush();
      } finally {
        executions.end(processId);
      }
    }
    // The run as this loop left it (its own last append), unless the stream was not read for a while.
    const final = (performance.now() - readAt < POLL_MS && cachedRun(eventStore, processId)) || (await loadRun(eventStore, processId));
    runSpan?.setAttributes({ [ATTR.status]: final.status, [ATTR.flowId]: final.flowId, ...eventAttributes(cachedRunPosition(eventStore, processId)) });
    if (runSpan && (final.status === 'failed' || final.status === 'timed_out')) markError(runSpan, `the run ${final.status}`);
    return final;
  });
}
