import { randomUUID } from 'node:crypto';
import type { CommandContext } from '../commands/handle.js';
import { executeWorkflowCommand, loadWorkflow } from '../commands/workflows.js';
import { DomainError } from '../domain/shared/decider.js';
import { isWorkerDead, processOfWorkerId, type WorkerPresence } from '../domain/workers/index.js';
import { isClosed, runningWorkerNodes } from '../domain/workflows/index.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { WorkflowQueries, WorkflowTimers } from '../ports/workflows.js';

export interface WorkflowTimerPorts {
  eventStore: EventStore;
  clock: Clock;
  logger: Logger;
  queries: WorkflowQueries;
  /** Worker presence (the runs' recovery reads the same): a workflow whose node worker is dead is taken over. */
  workerPresence(workerId: string): Promise<WorkerPresence | null>;
  /** This process's worker id (presence id): its own nodes are never judged dead. */
  localWorkerId: string;
  heartbeatMs: number;
  /** Timers due within this many ms are held in memory (default 60 s). */
  horizonMs?: number;
  /**
   * How often the read model is scanned for due timers and lost workflows (default: the heartbeat
   * interval, like the runs' recovery, at most horizon / 4 and 15 s, at least 250 ms). The scan at
   * start may run before the read model has caught up (embedded: rebuilt in memory at start), so
   * timers that came due while every process was dead are found by the next scan: this bounds how late.
   */
  scanMs?: number;
}

/**
 * Durable timers of workflows. TimerScheduled events (through the workflow consumer) and a periodic
 * scan of the `workflowTimers` read model arm in-memory timeouts for timers due within the horizon
 * only; at fireAt the firing is decided on the workflow's stream (FireTimer), which records
 * TimerFired once however many workers race, and nothing for a paused workflow (it fires on
 * resume). After a crash the scan at start finds every pending timer whose time passed: it fires
 * once, late. The scan also takes over workflows whose node worker died (InterruptNodes).
 */
export function createWorkflowTimers(ports: WorkflowTimerPorts): WorkflowTimers {
  const { eventStore, clock, logger } = ports;
  const horizonMs = ports.horizonMs ?? 60_000;
  const scanMs = ports.scanMs ?? Math.max(250, Math.min(15_000, ports.heartbeatMs, Math.floor(horizonMs / 4)));
  const held = new Map<string, NodeJS.Timeout>();
  let interval: NodeJS.Timeout | null = null;
  let closed = false;
  let scanning: Promise<number> | null = null;
  const log = logger.child({ component: 'workflow-timers' });

  const context = (): CommandContext => ({ actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: clock.now() });

  function arm(workflowId: string, timerId: string, fireAtMs: number) {
    const key = `${workflowId}/${timerId}`;
    if (closed || held.has(key)) return;
    const delay = Math.max(0, fireAtMs - clock.now().getTime());
    const handle = setTimeout(() => {
      held.delete(key);
      void fire(workflowId, timerId, fireAtMs);
    }, delay);
    held.set(key, handle);
  }

  async function fire(workflowId: string, timerId: string, fireAtMs: number) {
    if (closed) return;
    try {
      const ctx = context();
      if (ctx.now.getTime() < fireAtMs) return arm(workflowId, timerId, fireAtMs); // a timeout that woke early
      await executeWorkflowCommand(eventStore, ctx, workflowId, { type: 'FireTimer', timerId });
    } catch (err) {
      if (closed) return;
      if (err instanceof DomainError && err.kind !== 'conflict') return; // gone (a new execution), nothing to do
      log.warn({ workflowId, timerId, err: (err as Error).message }, 'firing a timer failed; retrying');
      setTimeout(() => void fire(workflowId, timerId, fireAtMs), 500).unref();
    }
  }

  async function takeOverLost(): Promise<void> {
    const candidates = await ports.queries.runningWorkflows(100);
    for (const c of candidates) {
      if (!c.workerId) continue;
      const holder = processOfWorkerId(c.workerId);
      if (holder === ports.localWorkerId) continue;
      const presence = await ports.workerPresence(holder);
      const dead = presence ? isWorkerDead(presence, clock.now(), ports.heartbeatMs) : clock.now().getTime() - Date.parse(c.updatedAt) > 5 * ports.heartbeatMs;
      if (!dead) continue;
      const { state, revision } = await loadWorkflow(eventStore, c.workflowId);
      if (isClosed(state.status) || state.workerId !== c.workerId || runningWorkerNodes(state).length === 0) continue;
      try {
        await executeWorkflowCommand(eventStore, context(), c.workflowId, { type: 'InterruptNodes', previousWorkerId: c.workerId }, null, revision);
        log.warn({ workflowId: c.workflowId, previousWorkerId: c.workerId }, 'took over a workflow from a dead worker');
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
  }

  async function scanOnce(): Promise<number> {
    const before = new Date(clock.now().getTime() + horizonMs).toISOString();
    let armed = 0;
    for (const t of await ports.queries.dueTimers(before, 5000)) {
      if (!held.has(`${t.workflowId}/${t.timerId}`)) armed++;
      arm(t.workflowId, t.timerId, Date.parse(t.fireAt));
    }
    await takeOverLost();
    return armed;
  }

  function scan(): Promise<number> {
    scanning ??= scanOnce().finally(() => (scanning = null));
    return scanning;
  }

  return {
    schedule(workflowId, timerId, fireAt) {
      const ms = Date.parse(fireAt);
      if (ms - clock.now().getTime() <= horizonMs) arm(workflowId, timerId, ms);
    },
    startWorker() {
      if (interval || closed) return;
      const tick = () => void scan().catch((err) => log.error({ err: (err as Error).message }, 'workflow timer scan failed'));
      tick();
      interval = setInterval(tick, scanMs);
      interval.unref();
    },
    scan,
    get held() {
      return held.size;
    },
    async close() {
      closed = true;
      if (interval) clearInterval(interval);
      for (const h of held.values()) clearTimeout(h);
      held.clear();
      await scanning?.catch(() => undefined);
    },
  };
}
