/** A piece of background work running in this service: what aborts it, and its end. */
export interface RunningWork<R> {
  readonly controller: AbortController;
  readonly done: Promise<R>;
}

/**
 * Work a service runs in the background and a later request may have to stop (an agent's turn, an
 * assistant's reply), by id, from its start to its end. Each service has its own, made by the
 * composition root (app/container.ts) and handed to the handlers in their ports: a cancel reaches
 * only the work of the service it lands on, and two services in one process (tests) or a service
 * rebuilt in place share nothing.
 */
export interface LocalWork<R> {
  /** The work running here under `id`; undefined when it runs in another process (or service) or has ended. */
  get(id: string): RunningWork<R> | undefined;
  has(id: string): boolean;
  /** Registers work that just started here; it is forgotten once `done` settles. */
  track(id: string, work: RunningWork<R>): void;
  /** How many are running here. */
  readonly size: number;
  /** Aborts all of it and waits for each to end, at most `waitMs` (a service stopping). */
  stopAll(waitMs: number): Promise<void>;
}

/** A service's registry of one kind of local work (a Map; nothing outside the process). */
export function localWork<R>(): LocalWork<R> {
  const running = new Map<string, RunningWork<R>>();
  return {
    get: (id) => running.get(id),
    has: (id) => running.has(id),
    track(id, work) {
      running.set(id, work);
      const forget = () => {
        if (running.get(id) === work) running.delete(id);
      };
      work.done.then(forget, forget);
    },
    get size() {
      return running.size;
    },
    async stopAll(waitMs) {
      const works = [...running.values()];
      for (const w of works) w.controller.abort();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
      await Promise.race([Promise.allSettled(works.map((w) => w.done)), late]);
      clearTimeout(timer);
    },
  };
}
