import { z } from 'zod';
import type { EventsOf } from '../shared/events.js';

/**
 * Events of a worker process's presence (stream `worker-<workerId>`). A worker announces itself,
 * beats while alive and says goodbye on a graceful stop; a process killed outright just stops
 * beating, which is how others tell it is gone (see liveness.ts).
 */
const at = z.string().min(1);

export const workerEventSchemas = {
  WorkerStarted: z.object({
    workerId: z.string().min(1).max(200),
    host: z.string().max(255),
    pid: z.number().int().min(0),
    /** The service role the process runs (`all`, `worker`, …). */
    role: z.string().min(1).max(50),
    /** The interval it promises to beat at; others judge its silence by it. */
    heartbeatMs: z.number().int().positive(),
    /**
     * The bus consumers this process runs (and the dead-letter retrier can deliver to). Absent in
     * announcements from before it existed, or from a process that runs none it names: unknown.
     */
    consumers: z.array(z.string().min(1).max(200)).max(500).optional(),
    at,
  }),
  WorkerHeartbeat: z.object({ at }),
  WorkerStopped: z.object({ at }),
};

export type WorkerEventType = keyof typeof workerEventSchemas;
export type WorkerEvent = EventsOf<typeof workerEventSchemas>;
