import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';
import { MAX_ID_LENGTH, MAX_SHORT_TEXT_LENGTH } from '../flows/limits.js';
import { nodeCompletedSchema, nodeFailedSchema } from '../runs/events.js';
import { runDefinitionSchema } from '../runs/definition.js';

/**
 * Every event of a `workflow-<workflowId>` stream. The stream holds one execution at a time; a
 * workflow id created again (idempotency policy permitting) starts a new execution with a new
 * WorkflowCreated, whose `execution` counts up.
 */
const at = z.string().min(1);
const id = z.string().min(1).max(MAX_ID_LENGTH);
const name = z.string().min(1).max(MAX_SHORT_TEXT_LENGTH);
const jsonRecord = z.record(z.string(), z.json());
const reason = z.string().max(2000).nullable();
/** Timer ids: generated ones, or `<kind>:<nodeId>:<attempt>` for the timers nodes schedule. */
const timerId = z.string().min(1).max(300);

export const IDEMPOTENCY_POLICIES = ['reject_duplicate', 'allow_duplicate_failed_only', 'allow_duplicate'] as const;
export type IdempotencyPolicy = (typeof IDEMPOTENCY_POLICIES)[number];

export const searchAttributeValueSchema = z.union([z.string().max(1000), z.number(), z.boolean()]);
export const TIMER_KINDS = ['user', 'sleep', 'signal_timeout', 'execution_timeout'] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

export const workflowEventSchemas = {
  WorkflowCreated: z.object({
    workflowId: id,
    /** 1 for the first execution under this id, more when the id was used again. */
    execution: z.number().int().min(1),
    flowId: id,
    flowVersion: z.number().int().min(0),
    ownerId: z.string().min(1),
    orgId: z.string().nullable(),
    workspaceId: z.string().nullable(),
    createdBy: z.string().nullable(),
    input: z.json(),
    searchAttributes: z.record(z.string(), searchAttributeValueSchema),
    memo: jsonRecord,
    idempotencyPolicy: z.enum(IDEMPOTENCY_POLICIES),
    /** Milliseconds from the start after which the workflow ends TIMED_OUT; null: no limit. */
    executionTimeoutMs: z.number().int().positive().nullable(),
    definition: runDefinitionSchema,
    /** The state carried over by continue-as-new ({} otherwise). */
    state: jsonRecord,
    continuedFrom: id.nullable(),
    at,
  }),
  WorkflowStarted: z.object({ by: z.string().nullable(), at }),
  WorkflowNodeStarted: z.object({ nodeId: id, attempt: z.number().int().min(1), workerId: z.string().nullable(), at }),
  WorkflowNodeCompleted: nodeCompletedSchema,
  WorkflowNodeFailed: nodeFailedSchema,
  WorkflowNodeSkipped: z.object({ nodeId: id, reason: z.string().max(1000), at }),
  /** Nodes that were running on a worker judged dead; they are pending again. */
  WorkflowNodesInterrupted: z.object({ nodeIds: z.array(id), previousWorkerId: z.string().nullable(), at }),
  /** A set_state node (or continue-as-new) merged `values` into the workflow's state. */
  WorkflowStateSet: z.object({ nodeId: id.nullable(), values: jsonRecord, at }),
  SignalReceived: z.object({ signalId: id, name, payload: z.json(), requestId: z.string().max(MAX_SHORT_TEXT_LENGTH).nullable(), by: z.string().nullable(), at }),
  /** The signal was consumed by a wait_signal node (its output is the payload). */
  SignalDelivered: z.object({ signalId: id, nodeId: id, at }),
  TimerScheduled: z.object({
    timerId,
    name,
    kind: z.enum(TIMER_KINDS),
    fireAt: at,
    signal: z.object({ name, payload: z.json() }).nullable(),
    nodeId: id.nullable(),
    at,
  }),
  /** `lateMs`: how long after `fireAt` it fired (a paused workflow's timers fire on resume). */
  TimerFired: z.object({ timerId, lateMs: z.number().min(0), at }),
  TimerCanceled: z.object({ timerId, reason: z.string().max(2000), at }),
  WorkflowPaused: z.object({ by: z.string().nullable(), reason, at }),
  WorkflowResumed: z.object({ by: z.string().nullable(), reason, at }),
  WorkflowCancelRequested: z.object({ by: z.string().nullable(), reason, at }),
  WorkflowCanceled: z.object({ by: z.string().nullable(), reason, at }),
  WorkflowTerminated: z.object({ by: z.string().nullable(), reason, at }),
  WorkflowCompleted: z.object({ result: z.json(), at }),
  WorkflowFailed: z.object({ code: name, message: z.string().max(2000), nodeId: id.nullable(), at }),
  WorkflowTimedOut: z.object({ timeoutMs: z.number().int().min(0), at }),
  /** This execution closed and `newWorkflowId` carries its state on (it names this one in `continuedFrom`). */
  WorkflowContinuedAsNew: z.object({ newWorkflowId: id, by: z.string().nullable(), at }),
};

export type WorkflowEvent = EventsOf<typeof workflowEventSchemas>;
export type WorkflowEventType = keyof typeof workflowEventSchemas;
export type WorkflowEventOf<K extends WorkflowEventType> = Extract<WorkflowEvent, { type: K }>;
export const WORKFLOW_EVENT_TYPES = Object.keys(workflowEventSchemas) as WorkflowEventType[];

/**
 * The events that close a workflow (state.ts: each ends it in a closed status, its timers closed
 * with it). A set of plain strings, so a recorded event's type can be looked up.
 */
export const WORKFLOW_CLOSING_EVENTS: ReadonlySet<string> = new Set([
  'WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled', 'WorkflowTerminated', 'WorkflowTimedOut', 'WorkflowContinuedAsNew',
] satisfies WorkflowEventType[]);
