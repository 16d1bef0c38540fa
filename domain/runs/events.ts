import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { MAX_ID_LENGTH, MAX_SHORT_TEXT_LENGTH } from '../flows/limits.js';
import { runDefinitionSchema } from './definition.js';
import { MAX_ERROR_MESSAGE_LENGTH, MAX_SKIP_REASON_LENGTH } from './limits.js';

/**
 * Every event of a `run-<processId>` stream. Who asked is in the event metadata (`actorId`) as
 * well; RunRequested repeats it because public-trigger runs have no actor.
 */
export const RUN_MODES = ['flow', 'node'] as const;
export type RunMode = (typeof RUN_MODES)[number];

const at = z.string().min(1);
const id = z.string().min(1).max(MAX_ID_LENGTH);
const jsonRecord = z.record(z.string(), z.json());

/** The seed's `usage`, in its snake_case; providers' extra counters (cached_tokens, …) pass through. */
export const nodeUsageSchema = z.looseObject({
  total_tokens: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0).optional(),
  completion_tokens: z.number().int().min(0).optional(),
  /** US dollars. */
  cost: z.number().min(0),
});
export type NodeUsage = z.infer<typeof nodeUsageSchema>;

/** The seed's `overrideConfig` for llm nodes (single-node runs: that node; flow runs: every llm node). */
export const overrideConfigSchema = z.object({
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().max(1_000_000).optional(),
  model: z.string().min(1).max(MAX_SHORT_TEXT_LENGTH).optional(),
});
export type OverrideConfig = z.infer<typeof overrideConfigSchema>;

/** One evaluated condition; `condition` is readable (`contains "yes"`, or the prompt), `index` its place in data.conditions. */
export const conditionalResultSchema = z.object({
  condition: z.string(),
  result: z.boolean(),
  targetNodeId: z.string().nullable(),
  index: z.number().int().min(0).optional(),
});
export type ConditionalResult = z.infer<typeof conditionalResultSchema>;

export const nodeErrorSchema = z.object({
  /** Stable, machine-readable: PROVIDER_ERROR, TIMEOUT, HTTP_STATUS, ABORTED, OUTPUT_TOO_LARGE, … */
  code: z.string().min(1).max(MAX_SHORT_TEXT_LENGTH),
  message: z.string().max(MAX_ERROR_MESSAGE_LENGTH),
  /** The LLM provider (or other upstream) that failed, when there is one. */
  provider: z.string().max(MAX_SHORT_TEXT_LENGTH).optional(),
});
export type NodeError = z.infer<typeof nodeErrorSchema>;

export const usageTotalsSchema = z.object({
  total_tokens: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  cost: z.number().min(0),
});
export type UsageTotals = z.infer<typeof usageTotalsSchema>;

/** A node's end, the same in a run and in a workflow. `attempt` is 1 on the first start, more after a restart. */
export const nodeCompletedSchema = z.object({
  nodeId: id,
  attempt: z.number().int().min(1),
  output: z.json(),
  metadata: jsonRecord,
  conditionalResults: z.array(conditionalResultSchema),
  usage: nodeUsageSchema,
  /** Milliseconds. */
  executionTime: z.number().min(0),
  at,
});
export const nodeFailedSchema = z.object({ nodeId: id, attempt: z.number().int().min(1), error: nodeErrorSchema, executionTime: z.number().min(0), at });

/** The statuses a run ends in (state.ts's isFinished; a pruned run's summary keeps one). */
export const FINISHED_STATUSES = ['completed', 'failed', 'stopped', 'timed_out'] as const;
const NODE_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped'] as const;
const nullableAt = at.nullable();

/** Which run of which flow, whose, and of what kind: the first fields of RunRequested and of a pruned run's summary. */
/** What a replayed run replays from: the original run, where it starts again, and the nodes that answer from the original's recording. */
export const runReplaySchema = z.object({
  of: id,
  fromNodeId: id.nullable(),
  sideEffects: z.enum(['recorded', 'live']),
  /** Nodes completed with the original's output instead of executing: those upstream of fromNodeId, and unchanged side-effect nodes when sideEffects is recorded. */
  reuse: z.array(id),
});
export type RunReplay = z.infer<typeof runReplaySchema>;

const runOriginShape = {
  processId: id,
  flowId: id,
  /** Stream revision of the flow the snapshot was taken at (the flow's public `version`). */
  flowVersion: z.number().int().min(0),
  /** The flow's tenancy, so the run's read model can be scoped without a join. */
  ownerId: z.string().min(1),
  orgId: z.string().nullable(),
  workspaceId: z.string().nullable(),
  mode: z.enum(RUN_MODES),
  /** The node of a single-node run; null for a flow run. */
  nodeId: id.nullable(),
};

/**
 * What a pruned run keeps (RunHistoryPruned): who, which flow, how it ended, its timings, tokens,
 * cost and errors, per node too; not its inputs, outputs, node outputs or the flow's snapshot.
 */
export const runSummarySchema = z.object({
  ...runOriginShape,
  async: z.boolean(),
  requestedBy: z.string().nullable(),
  source: z.string().min(1).max(50),
  saveToHistory: z.boolean(),
  idempotencyKey: z.string().max(MAX_SHORT_TEXT_LENGTH).nullable(),
  status: z.enum(FINISHED_STATUSES),
  workerId: z.string().nullable(),
  resumes: z.number().int().min(0),
  stopRequested: z.object({ by: z.string().nullable(), at }).nullable(),
  usage: usageTotalsSchema,
  outputsTruncated: z.boolean(),
  failure: z.object({ code: z.string(), reason: z.string(), nodeId: id.nullable() }).nullable(),
  requestedAt: at,
  startedAt: nullableAt,
  finishedAt: at,
  nodes: z.array(
    z.object({
      nodeId: id,
      nodeType: z.string().nullable(),
      status: z.enum(NODE_STATUSES),
      attempts: z.number().int().min(0),
      startedAt: nullableAt,
      finishedAt: nullableAt,
      usage: nodeUsageSchema.nullable(),
      executionTime: z.number().min(0).nullable(),
      error: nodeErrorSchema.nullable(),
      skipReason: z.string().nullable(),
    }),
  ),
});
export type RunSummary = z.infer<typeof runSummarySchema>;

/** Why a run's history was pruned: older than the days kept, or beyond the runs kept per flow. */
export const PRUNE_REASONS = ['age', 'count'] as const;
export type PruneReason = (typeof PRUNE_REASONS)[number];

export const runEventSchemas = {
  RunRequested: z.object({
    ...runOriginShape,
    inputs: jsonRecord,
    async: z.boolean(),
    /** User id, null when no user asked (public trigger). */
    requestedBy: z.string().nullable(),
    /** How the run was asked for: `api`, `trigger`, `extension`, `workflow`, … */
    source: z.string().min(1).max(50),
    saveToHistory: z.boolean(),
    overrideConfig: overrideConfigSchema.nullable(),
    idempotencyKey: z.string().max(MAX_SHORT_TEXT_LENGTH).nullable(),
    definition: runDefinitionSchema,
    /** Set on a replay (POST /processes/{id}/replay): the run replayed and the nodes answered from its recording. */
    replay: runReplaySchema.optional(),
    at,
  }),
  /**
   * A worker claimed the run. `unclaimedForMs` is set when the sweep claimed a run nobody had
   * claimed for RUN_CLAIM_TIMEOUT_MS: how long it had waited.
   */
  RunStarted: z.object({ workerId: z.string().min(1), unclaimedForMs: z.number().int().min(0).optional(), at }),
  /** `attempt` is 1 on the first start, more after a resume restarted an interrupted node. */
  NodeStarted: z.object({ nodeId: id, attempt: z.number().int().min(1), at }),
  NodeCompleted: nodeCompletedSchema,
  NodeFailed: nodeFailedSchema,
  NodeSkipped: z.object({ nodeId: id, reason: z.string().max(MAX_SKIP_REASON_LENGTH), at }),
  /** `outputs`: by output node's outputKey (or id), else by sink node id; cut to previews when `outputsTruncated`. */
  RunCompleted: z.object({ outputs: jsonRecord, outputsTruncated: z.boolean(), usage: usageTotalsSchema, at }),
  /** `code`: NODE_FAILED, NODE_INTERRUPTED_TOO_OFTEN, RUN_STUCK, or the caller's (TIMEOUT, WORKER_LOST, …). */
  RunFailed: z.object({ code: z.string().min(1).max(MAX_SHORT_TEXT_LENGTH), reason: z.string().max(MAX_ERROR_MESSAGE_LENGTH), nodeId: id.nullable(), usage: usageTotalsSchema, at }),
  RunStopRequested: z.object({ by: z.string().nullable(), at }),
  RunStopped: z.object({ usage: usageTotalsSchema, at }),
  /**
   * The run passed RUN_TIMEOUT_MS (`timeoutMs`, counted from RunRequested) before it ended, queued
   * or running; nodes still running end failed with ABORTED, their calls are aborted.
   */
  RunTimedOut: z.object({ timeoutMs: z.number().int().min(0), reason: z.string().max(MAX_ERROR_MESSAGE_LENGTH), usage: usageTotalsSchema, at }),
  /** A new worker (or the same one restarted) took over; `interruptedNodeIds` were running and are pending again. */
  RunResumed: z.object({ workerId: z.string().min(1), previousWorkerId: z.string().nullable(), interruptedNodeIds: z.array(id), at }),
  /**
   * Run-history retention: the finished run's `prunedEvents` earlier events are deleted from its
   * stream in the same append (domain/retention.ts), so the stream starts again here and the run
   * lives on as its summary. The flow's stream and the audit of who ran what are untouched.
   */
  RunHistoryPruned: z.object({
    reason: z.enum(PRUNE_REASONS),
    /** The retention that applied: days kept and runs kept per flow (null: no such bound). */
    keepDays: z.number().int().min(1).nullable(),
    keepLast: z.number().int().min(1).nullable(),
    prunedEvents: z.number().int().min(1),
    summary: runSummarySchema,
    at,
  }),
};

export type RunEventType = keyof typeof runEventSchemas;
type Data<K extends RunEventType> = z.infer<(typeof runEventSchemas)[K]>;
export type RunEvent = EventsOf<typeof runEventSchemas>;
export type RunEventOf<K extends RunEventType> = Extract<RunEvent, { type: K }>;
export type RunEventData<K extends RunEventType> = Data<K>;
export const RUN_EVENT_TYPES = Object.keys(runEventSchemas) as RunEventType[];

/**
 * The events that finish a run, one per finished status: after one of them no worker holds the run
 * and it takes no more steps. A set of plain strings, so a recorded event's type can be looked up.
 */
export const RUN_FINISHING_EVENTS: ReadonlySet<string> = new Set(['RunCompleted', 'RunFailed', 'RunStopped', 'RunTimedOut'] satisfies RunEventType[]);
