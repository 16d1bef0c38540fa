/**
 * A closed loop of multi-request scenarios (create a workflow, signal it, follow its history) run
 * in a worker thread, as load.ts does for single requests: the client's JSON, sockets and waits do
 * not take turns on the event loop of the service it measures (issue 29: the workflows bench
 * counted its own fetch and response checks against the service). Scenarios live in
 * bench-scenarios.ts, which the worker imports; each gets a lean keep-alive client.
 */
import http from 'node:http';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { inWorker } from './worker.js';
import { scenarios, type ScenarioName } from './bench-scenarios.js';

export interface ScenarioOptions {
  scenario: ScenarioName;
  /** The service's API base, e.g. http://127.0.0.1:1234/api. */
  baseUrl: string;
  headers: Record<string, string>;
  params: Record<string, string>;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export interface ScenarioResult {
  count: number;
  elapsedMs: number;
  latencies: number[];
  failures: number;
  firstFailure: string | null;
}

export interface BenchClient {
  /** One request; the body is JSON in and out (undefined when empty or not JSON). */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
}

/** Runs the scenario's loop in a worker thread and resolves with its result. */
export function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  return inWorker<ScenarioResult>(import.meta.url, options, 'scenario');
}

function clientFor(o: ScenarioOptions): { client: BenchClient; close(): void } {
  const base = new URL(o.baseUrl);
  // Twice the loops: a scenario may hold a long poll open while its next request goes out.
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency * 2 });
  const call: BenchClient['call'] = (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { ...o.headers, ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}) };
      const req = http.request({ agent, host: base.hostname, port: base.port, method, path: `${base.pathname}${path}`, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  return { client: { call }, close: () => agent.destroy() };
}

async function loop(o: ScenarioOptions): Promise<ScenarioResult> {
  const { client, close } = clientFor(o);
  const once = scenarios[o.scenario];
  const phase = async (ms: number, result: ScenarioResult | null) => {
    const t0 = performance.now();
    const deadline = t0 + ms;
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (performance.now() < deadline) {
          const start = performance.now();
          try {
            await once(client, o.params);
            if (result) {
              result.count++;
              result.latencies.push(performance.now() - start);
            }
          } catch (err) {
            if (!result) throw err;
            result.failures++;
            result.firstFailure ??= (err as Error).message;
          }
        }
      }),
    );
    return performance.now() - t0;
  };
  try {
    await phase(o.warmupMs, null);
    const result: ScenarioResult = { count: 0, elapsedMs: 0, latencies: [], failures: 0, firstFailure: null };
    result.elapsedMs = await phase(o.durationMs, result);
    return result;
  } finally {
    close();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  loop(workerData as ScenarioOptions).then(
    (result) => port.postMessage(result),
    (err) => {
      throw err;
    },
  );
}
