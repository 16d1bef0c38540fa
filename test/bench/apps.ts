/**
 * Apps delivery: (1) deploy time of a 100-file app (POST /apps/{id}/deploy → READY, seen through GET
 * …/deploy polled every 10 ms; the build bundles a TSX entry with esbuild in a worker thread), and
 * (2) requests/s of the deployed app's static files through the service's HTTP server
 * (`/apps-public/a/<appId>/…`: the live deployment checked against the log's head, the built site
 * from the process's cache, strict headers, ETag) next to a bare
 * `node:http` server answering the same bytes from memory, same load generator, same run.
 */
import { createServer, type Server } from 'node:http';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { greeterFlow, seedApp } from '../api/apps-deploy-support.js';
import { runLoad, type LoadResult } from './load.js';
import { fmt, latency, settle, type Report } from './support.js';

const BENCH = 'apps delivery';

export interface AppsBenchOptions {
  files: number;
  deploys: number;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

export const defaults: AppsBenchOptions = { files: 100, deploys: 3, concurrency: 32, warmupMs: 500, durationMs: 3_000 };

/** 100 files: index.html, a TSX entry importing 9 modules, and static CSS/JS/JSON/SVG files of ~2 KiB. */
function appFiles(n: number) {
  const files: Array<{ path: string; content: string }> = [];
  const modules = 9;
  files.push({ path: 'index.html', content: '<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="static/s0.css"></head><body><div id="app"></div><script src="app-client.js"></script><script src="src/main.tsx"></script></body></html>' });
  const imports = Array.from({ length: modules }, (_, i) => `import { part${i} } from "./m${i}";`).join('\n');
  files.push({ path: 'src/main.tsx', content: `${imports}\nconst h = (t: string, _p: unknown, ...c: unknown[]) => ({ t, c });\nconst view = <div>{[${Array.from({ length: modules }, (_, i) => `part${i}()`).join(', ')}].join(" ")}</div>;\nconsole.log(view);\n` });
  for (let i = 0; i < modules; i++) files.push({ path: `src/m${i}.ts`, content: `export function part${i}(): string {\n  return ${JSON.stringify('x'.repeat(200))}.slice(0, ${i + 1});\n}\n` });
  const filler = 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(56); // ~2 KiB
  const kinds = ['css', 'js', 'json', 'svg'];
  for (let i = 0; files.length < n; i++) {
    const kind = kinds[i % kinds.length];
    const content =
      kind === 'css' ? `.c${i} { content: "${filler}"; }` : kind === 'js' ? `window.v${i} = "${filler}";` : kind === 'json' ? JSON.stringify({ i, filler }) : `<svg xmlns="http://www.w3.org/2000/svg"><desc>${filler}</desc></svg>`;
    files.push({ path: `static/s${i}.${kind}`, content });
  }
  return files;
}

export async function benchApps(report: Report, o: AppsBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let bare: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', APPS_PUBLIC_CALLS_PER_MINUTE: '100000' });
    const svc = service;
    const owner = await registerUser(svc.baseUrl);
    const flowId = await greeterFlow(svc, owner);
    const files = appFiles(o.files);
    const appId = await seedApp(svc, owner, files, flowId);
    report.info(BENCH, `app: ${files.length} files (${fmt(files.reduce((s, f) => s + f.content.length, 0))} bytes), 1 TSX entry importing 9 modules; full service from startTestService('embedded')`);

    // (1) deploy time, request to READY, a few times (the first deploy also takes the version of the head).
    const times: number[] = [];
    let buildMs = 0;
    let url = '';
    for (let i = 0; i < o.deploys; i++) {
      const t0 = performance.now();
      const res = i === 0 ? await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth) : await call(svc.baseUrl, 'POST', `/apps/${appId}/redeploy`, undefined, owner.auth);
      if (res.status !== 202) throw new Error(`deploy answered ${res.status}: ${res.text}`);
      for (;;) {
        const st = await call(svc.baseUrl, 'GET', `/apps/${appId}/deploy?limit=1`, undefined, owner.auth);
        if (st.body.status === 'READY' && st.body.live?.deploymentId === res.body.deployment.deploymentId) {
          times.push(performance.now() - t0);
          buildMs = st.body.live.timings.buildMs;
          url = st.body.url;
          break;
        }
        if (st.body.status === 'ERROR') throw new Error(`deployment failed: ${JSON.stringify(st.body.latest.error)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const sorted = [...times].sort((a, b) => a - b);
    report.figure(BENCH, `deploy of a ${files.length}-file app, request → READY (median of ${o.deploys})`, sorted[Math.floor(sorted.length / 2)], 'ms', {
      note: `each: ${times.map((t) => fmt(t)).join(', ')} ms; last build ${buildMs} ms in the worker`,
    });

    // (2) static files: the service vs a bare node:http server with the same bytes.
    const staticPaths = files.filter((f) => f.path.startsWith('static/')).map((f) => f.path);
    const served = new Map<string, { body: Buffer; type: string; etag: string }>();
    for (const path of staticPaths) {
      const res = await fetch(`${url}${path}`);
      if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`);
      served.set(`/${path}`, { body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type')!, etag: res.headers.get('etag')! });
    }
    bare = createServer((req, res) => {
      const file = served.get(req.url ?? '');
      if (!file) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('content-type', file.type);
      res.setHeader('etag', file.etag);
      res.setHeader('content-length', file.body.length);
      res.end(file.body);
    });
    await new Promise<void>((resolve) => bare!.listen(0, '127.0.0.1', resolve));
    report.info(BENCH, `static load: ${staticPaths.length} files round-robin, ${o.concurrency} keep-alive connections, ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured each; the load generator is a worker thread of this process`);
    const base = new URL(url);
    const load = (port: number, paths: string[]) => runLoad({ host: '127.0.0.1', port, method: 'GET', paths, concurrency: o.concurrency, warmupMs: o.warmupMs, durationMs: o.durationMs });
    // Alternating rounds (bare, service, bare, service): other load on the machine hits both alike.
    const rounds = 2;
    const bareRounds: LoadResult[] = [];
    const appRounds: LoadResult[] = [];
    for (let i = 0; i < rounds; i++) {
      bareRounds.push(await load((bare.address() as { port: number }).port, staticPaths.map((p) => `/${p}`)));
      await settle();
      appRounds.push(await load(Number(base.port), staticPaths.map((p) => `${base.pathname}${p}`)));
      await settle();
    }
    const bareResult = merge(bareRounds);
    const appResult = merge(appRounds);
    record(report, 'bare node:http, same files from memory', bareResult);
    record(report, 'deployed app via /apps-public/a/<appId>/ (full service)', appResult);
    const ratio = (appResult.requests / appResult.elapsedMs / (bareResult.requests / bareResult.elapsedMs)) * 100;
    report.figure(BENCH, 'deployed static files throughput as a share of bare node:http', ratio, '%', { digits: 1, target: { op: '>=', value: 50 } });
  } finally {
    if (bare) await new Promise<void>((resolve) => { bare!.close(() => resolve()); bare!.closeAllConnections(); });
    await service?.stop();
  }
}

function merge(results: LoadResult[]): LoadResult {
  const latencies = new Float64Array(results.reduce((n, r) => n + r.latencies.length, 0));
  let offset = 0;
  for (const r of results) {
    latencies.set(r.latencies, offset);
    offset += r.latencies.length;
  }
  const statuses: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    requests: results.reduce((n, r) => n + r.requests, 0), failures: results.reduce((n, r) => n + r.failures, 0), statuses,
    elapsedMs: results.reduce((n, r) => n + r.elapsedMs, 0), latencies, firstFailure: results.find((r) => r.firstFailure)?.firstFailure ?? null,
  };
}

function record(report: Report, what: string, r: LoadResult): void {
  const lat = latency(r.latencies);
  const failures = r.failures ? `; ${r.failures} failed (${JSON.stringify(r.statuses)}), first: ${r.firstFailure}` : '';
  report.figure(BENCH, `${what}: throughput`, r.requests / (r.elapsedMs / 1000), 'req/s', { note: `${fmt(r.requests)} requests in ${(r.elapsedMs / 1000).toFixed(1)} s${failures}` });
  report.figure(BENCH, `${what}: latency p50`, lat.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${what}: latency p99`, lat.p99, 'ms', { digits: 2 });
}
