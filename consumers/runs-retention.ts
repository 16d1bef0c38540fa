import { randomUUID } from 'node:crypto';
import { handleCommand } from '../commands/handle.js';
import { runDecider, runStreamId, type PruneReason } from '../domain/runs/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { RunRetentionQueries } from '../ports/runs.js';

/** How long finished runs keep their whole history; 0 or null: no such bound. */
export interface RunHistoryRetention {
  keepDays: number | null;
  keepLast: number | null;
}

/** An organization's own retention; a null field takes the service default. */
export interface OrgRunRetention extends RunHistoryRetention {
  orgId: string;
}

export interface RunRetentionPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  queries: RunRetentionQueries;
  /** Organizations that set a retention of their own (PUT /orgs/{orgId}). */
  orgRetentions(): Promise<OrgRunRetention[]>;
  /** RUN_HISTORY_KEEP_DAYS / RUN_HISTORY_KEEP_LAST. */
  defaults: RunHistoryRetention;
}

export interface RetentionSweepResult {
  pruned: Array<{ processId: string; reason: PruneReason }>;
}

/** Runs pruned per candidate query; a sweep repeats its queries up to MAX_PER_SWEEP. */
const BATCH = 200;
const MAX_PER_SWEEP = 5_000;
/** Finished runs looked at per sweep to find the flows whose kept runs grew. */
const RECENT_SCAN = 5_000;
const DAY_MS = 24 * 3600 * 1000;
const LATE_MS = 5 * 60 * 1000;

const bound = (v: number | null | undefined) => (v && v > 0 ? v : null);

/**
 * Retention of run history (issue 30): a finished run keeps its node events while it is among the
 * newest `keepLast` runs of its flow and finished less than `keepDays` ago; past either bound its
 * history is cut down to a summary by RunHistoryPruned, which the store appends and truncates
 * before in one step (domain/retention.ts). Candidates come from the `run_retention` read model;
 * each is decided on its own stream, so sweeps of several workers, replays and restarts prune
 * each run once. Nothing is kept in memory that a restart would need: at start every flow is
 * looked at once, then only flows with runs finished since the last sweep.
 */
export function createRunRetention(ports: RunRetentionPorts) {
  const { eventStore, clock, queries } = ports;
  const log = ports.logger.child({ component: 'run-retention' });
  /** Finished runs up to here were looked at for keep-last; '' at start (every flow once). */
  let countedThrough = '';
  /** Flows that still had runs beyond their bound when a sweep ran out of budget. */
  const unfinishedFlows = new Map<string, string | null>();

  async function prune(processId: string, orgId: string | null, reason: PruneReason, policy: RunHistoryRetention): Promise<boolean> {
    const now = clock.now();
    try {
      const result = await handleCommand(eventStore, {
        streamId: runStreamId(processId),
        decider: runDecider,
        command: { type: 'PruneRunHistory', reason, keepDays: bound(policy.keepDays), keepLast: bound(policy.keepLast), at: now.toISOString() },
        context: { actorId: null, orgId, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now },
      });
      return result.events.length > 0;
    } catch (err) {
      // Not finished yet (a replayed request made it look active), gone, or raced by another sweep.
      if (err instanceof DomainError) return false;
      throw err;
    }
  }

  return {
    async sweep(): Promise<RetentionSweepResult> {
      const result: RetentionSweepResult = { pruned: [] };
      const now = clock.now().getTime();
      const orgs = await ports.orgRetentions();
      const policyOf = (orgId: string | null): RunHistoryRetention => {
        const own = orgId === null ? undefined : orgs.find((o) => o.orgId === orgId);
        return { keepDays: own?.keepDays ?? ports.defaults.keepDays, keepLast: own?.keepLast ?? ports.defaults.keepLast };
      };
      const budgetLeft = () => MAX_PER_SWEEP - result.pruned.length;
      const pruneAll = async (docs: Array<{ _id: string; orgId: string | null }>, reason: PruneReason) => {
        let progressed = false;
        for (const doc of docs) {
          if (budgetLeft() <= 0) break;
          try {
            if (await prune(doc._id, doc.orgId, reason, policyOf(doc.orgId))) {
              result.pruned.push({ processId: doc._id, reason });
              progressed = true;
            }
          } catch (err) {
            log.error({ processId: doc._id, err: (err as Error).message }, 'pruning a run failed; retrying at the next sweep');
          }
        }
        return progressed;
      };

      // Age: the service default for every organization without its own days, then each of those.
      const ownDays = orgs.filter((o) => o.keepDays !== null);
      const agePasses: Array<[days: number | null, scope: { orgId: string } | { exceptOrgs: string[] }]> = [
        [bound(ports.defaults.keepDays), { exceptOrgs: ownDays.map((o) => o.orgId) }],
        ...ownDays.map((o): [number | null, { orgId: string }] => [bound(o.keepDays), { orgId: o.orgId }]),
      ];
      for (const [days, scope] of agePasses) {
        if (days === null) continue;
        const before = new Date(now - days * DAY_MS).toISOString();
        while (budgetLeft() > 0) {
          const docs = await queries.finishedBefore(before, scope, Math.min(BATCH, budgetLeft()));
          if (!docs.length || !(await pruneAll(docs, 'age'))) break;
        }
      }

      // Count: the flows whose kept runs grew since the last sweep (every flow on the first one).
      const recent = await queries.finishedSince(countedThrough, RECENT_SCAN);
      const flows = new Map<string, string | null>();
      for (const [flowId, orgId] of unfinishedFlows) flows.set(flowId, orgId);
      for (const doc of recent) flows.set(doc.flowId, doc.orgId);
      // A little behind now: runs the projector records late (lag, another worker's clock) are looked at next time.
      countedThrough = recent.length === RECENT_SCAN ? recent[recent.length - 1].finishedAt! : new Date(now - LATE_MS).toISOString();
      unfinishedFlows.clear();
      for (const [flowId, orgId] of flows) {
        const keep = bound(policyOf(orgId).keepLast);
        if (keep === null) continue;
        if (budgetLeft() <= 0) {
          unfinishedFlows.set(flowId, orgId);
          continue;
        }
        const kept = await queries.keptOfFlow(flowId);
        if (kept <= keep) continue;
        const beyond = await queries.beyondNewest(flowId, keep, Math.min(kept - keep, budgetLeft()));
        await pruneAll(beyond, 'count');
        if (kept - keep > beyond.length) unfinishedFlows.set(flowId, orgId);
      }
      if (result.pruned.length) log.info({ pruned: result.pruned.length }, 'pruned run history');
      return result;
    },
  };
}
export type RunRetention = ReturnType<typeof createRunRetention>;

/** The sweep on a timer, first soon after start (not during it: a restart stays fast). */
export function startRunRetention(ports: RunRetentionPorts, intervalMs: number): { stop(): Promise<void>; retention: RunRetention } {
  const retention = createRunRetention(ports);
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    running = retention.sweep().catch((err) => ports.logger.error({ component: 'run-retention', err: (err as Error).message }, 'run retention sweep failed'));
  };
  const first = setTimeout(tick, Math.min(intervalMs, 30_000));
  const timer = setInterval(() => void running.then(tick), intervalMs);
  first.unref();
  timer.unref();
  return {
    retention,
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
  };
}
