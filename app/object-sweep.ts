import { loadState } from '../commands/handle.js';
import { appInstanceDecider, appInstanceStreamId } from '../domain/app-instances/index.js';
import { applicationDecider, applicationStreamId } from '../domain/careers/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { ObjectStore } from '../ports/object-store.js';

/**
 * The orphan sweep of the object store. Uploads are written before the event that names them
 * (careers CVs, app-instance files), and a crash between the two, or a delete that stopped halfway,
 * leaves a file no event names: personal data outside the log, and storage nobody reclaims. The sweep
 * removes such files once older than the grace period (so an upload in flight, whose event is about
 * to be recorded, is never taken). Only keys of the shapes below are considered; anything else under
 * those prefixes is left alone.
 */

export interface ObjectSweepPorts {
  eventStore: EventStore;
  objects: ObjectStore;
  logger: Logger;
  now: () => Date;
  /** Files younger than this are kept whatever the log says (OBJECT_ORPHAN_GRACE_MS). */
  graceMs: number;
}

type Owner = { streamId: string; names: (key: string) => Promise<boolean> };

/** Who may name `key`, by its shape; null for a shape this sweep does not know (kept). */
function ownerOf(key: string, load: <S>(streamId: string, decider: Parameters<typeof loadState<S>>[2]) => Promise<S>): Owner | null {
  const parts = key.split('/');
  if (parts[0] === 'careers' && parts.length === 4 && parts[3] === 'cv.pdf') {
    const streamId = applicationStreamId(parts[2]!);
    return {
      streamId,
      // A deleted application, or one whose deletion began (its key is already being shredded), names no file.
      names: async (k) => {
        const s = await load(streamId, applicationDecider);
        return s.exists && !s.deleted && !s.deleting && s.cvKey === k;
      },
    };
  }
  if (parts[0] === 'app-instances' && parts.length === 3) {
    const streamId = appInstanceStreamId(parts[1]!);
    return {
      streamId,
      names: async (k) => {
        const s = await load(streamId, appInstanceDecider);
        return s.exists && !s.deleted && s.files.some((f) => f.key === k);
      },
    };
  }
  return null;
}

export const SWEPT_PREFIXES = ['careers/', 'app-instances/'] as const;

/** One pass over the swept prefixes; answers the keys it removed. */
export async function sweepOrphanObjects(ports: ObjectSweepPorts): Promise<string[]> {
  const cutoff = ports.now().getTime() - ports.graceMs;
  // One fold per stream per pass: an instance with many files is read once.
  const states = new Map<string, Promise<unknown>>();
  const load = <S>(streamId: string, decider: Parameters<typeof loadState<S>>[2]): Promise<S> => {
    if (!states.has(streamId)) states.set(streamId, loadState(ports.eventStore, streamId, decider).then((r) => r.state));
    return states.get(streamId) as Promise<S>;
  };
  const removed: string[] = [];
  for (const prefix of SWEPT_PREFIXES) {
    for await (const object of ports.objects.list(prefix)) {
      if (Date.parse(object.lastModified) > cutoff) continue;
      const owner = ownerOf(object.key, load);
      if (!owner || (await owner.names(object.key))) continue;
      await ports.objects.delete(object.key);
      removed.push(object.key);
    }
  }
  if (removed.length) ports.logger.info({ component: 'object-sweep', removed: removed.length }, 'removed files no event names');
  return removed;
}

/** The sweep at start and then every `intervalMs` (0: never). One pass at a time in this process. */
export function startObjectSweep(ports: ObjectSweepPorts, intervalMs: number): { stop(): Promise<void> } {
  if (intervalMs <= 0) return { stop: async () => {} };
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    running = sweepOrphanObjects(ports).catch((err) => ports.logger.error({ component: 'object-sweep', err: (err as Error).message }, 'object sweep failed'));
  };
  tick();
  const timer = setInterval(() => void running.then(tick), intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
