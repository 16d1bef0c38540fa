/**
 * Benchmark load in worker threads: the load generators (load.ts, scenario-load.ts) run on the
 * other core, not on the event loop of the service they measure. No side effect on import: a
 * worker's module runs its own loop when it finds itself in a worker.
 */
import { Worker } from 'node:worker_threads';

/**
 * Loads the TypeScript module at `url` in a worker thread with `data` as its workerData and
 * resolves with the first message it posts (its result).
 */
export function inWorker<R>(url: string, data: unknown, what: string): Promise<R> {
  return new Promise((resolve, reject) => {
    // Node 20 does not apply tsx's --import loader to worker threads: register it, then load the file.
    const tsx = import.meta.resolve('tsx/esm/api');
    const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(url)}); })`;
    const worker = new Worker(bootstrap, { eval: true, workerData: data });
    let result: R | null = null;
    worker.once('message', (message: R) => (result = message));
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`${what} worker exited with code ${code} without a result`))));
  });
}
