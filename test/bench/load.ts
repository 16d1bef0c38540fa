/**
 * A small closed-loop HTTP load generator: N concurrent keep-alive connections
 * (http.Agent({keepAlive, maxSockets: N}) + http.request, no fetch/undici overhead), each sending
 * its next request as soon as the previous answer arrived, for a fixed duration after a warm-up.
 *
 * It runs in a worker thread of this process, so it does not share the server's event loop; it
 * still shares the machine's CPU cores with the server. autocannon would do the same job, but
 * adding a devDependency means touching package.json/package-lock.json beyond the bench script.
 */
import http from 'node:http';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { inWorker } from './worker.js';

export interface LoadOptions {
  host: string;
  port: number;
  method: 'POST' | 'GET';
  /** Paths used round-robin (e.g. one per probe of a pool). */
  paths: string[];
  body?: string;
  /** Extra request headers (e.g. Authorization). */
  headers?: Record<string, string>;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  requests: number;
  /** Non-2xx answers and transport errors (counted, not in `requests`/s). */
  failures: number;
  statuses: Record<string, number>;
  elapsedMs: number;
  /** Latency of each successful measured request, ms. */
  latencies: Float64Array;
  firstFailure: string | null;
}

/** Runs the load in a worker thread and resolves with its result. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  return inWorker<LoadResult>(import.meta.url, options, 'load');
}

async function generate(o: LoadOptions): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency });
  const body = o.body === undefined ? undefined : Buffer.from(o.body);
  const headers: Record<string, string | number> = {
    ...(o.headers ?? {}),
    ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}),
  };
  let next = 0;

  const once = (path: string) =>
    new Promise<{ status: number; error?: string }>((resolve) => {
      const req = http.request({ agent, host: o.host, port: o.port, method: o.method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          resolve(status >= 200 && status < 300 ? { status } : { status, error: `${status} ${Buffer.concat(chunks).toString().slice(0, 300)}` });
        });
        res.on('error', (err) => resolve({ status: 0, error: err.message }));
      });
      req.on('error', (err) => resolve({ status: 0, error: err.message }));
      req.end(body);
    });

  const phase = async (ms: number, record: boolean) => {
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    let failures = 0;
    let firstFailure: string | null = null;
    const started = performance.now();
    const deadline = started + ms;
    const connection = async () => {
      while (performance.now() < deadline) {
        const path = o.paths[next++ % o.paths.length];
        const t0 = performance.now();
        const r = await once(path);
        const t1 = performance.now();
        if (!record) continue;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.error) {
          failures++;
          firstFailure ??= r.error;
        } else latencies.push(t1 - t0);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, connection));
    const elapsedMs = performance.now() - started;
    return { requests: latencies.length, failures, statuses, elapsedMs, latencies: Float64Array.from(latencies), firstFailure };
  };

  await phase(o.warmupMs, false);
  const result = await phase(o.durationMs, true);
  agent.destroy();
  return result;
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  generate(workerData as LoadOptions).then(
    (result) => port.postMessage(result, [result.latencies.buffer as ArrayBuffer]),
    (err) => {
      throw err;
    },
  );
}
