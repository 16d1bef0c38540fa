/**
 * The cost of authentication: one cheap GET handler served three ways in the same app and run —
 * without credentials, with a JWT, and with an API key — by the same load generator. The routes are
 * the real app's machinery (createApp with its auth, validation and error handling) over a real
 * user and key created through the API; only the handler is a bench route that returns a constant.
 */
import { createServer, type Server } from 'node:http';
import { z } from 'zod';
import { createApp } from '../../api/app.js';
import { allRoutes } from '../../api/routes/index.js';
import { defineRoute } from '../../api/route.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { call } from '../support/http.js';
import { runLoad, type LoadResult } from './load.js';
import { fmt, latency, settle, type Report } from './support.js';

const BENCH = '5 auth cost';

const ping = (auth: 'none' | 'bearer', path: string) =>
  defineRoute({
    method: 'GET',
    path,
    operationId: `benchPing${auth}`,
    summary: 'bench',
    tag: 'Bench',
    auth,
    ...(auth === 'bearer' ? { permission: 'view_resources' as const } : {}),
    responses: { 200: { description: 'pong', schema: z.object({ success: z.literal(true) }) } },
    handler: async () => ({ status: 200, body: { success: true, pong: true } }),
  });

export async function benchAuth(report: Report): Promise<void> {
  let service: TestService | null = null;
  let server: Server | null = null;
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const email = `bench-${Date.now()}@example.com`;
    const registered = await call(service.baseUrl, 'POST', '/auth/register', { email, password: 'correct horse battery', name: 'Bench' });
    if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
    const jwt = registered.body.token as string;
    const key = await call(service.baseUrl, 'POST', '/api-keys', { name: 'bench' }, { Authorization: `Bearer ${jwt}` });
    if (key.status !== 201) throw new Error(`API key failed: ${key.status} ${key.text}`);
    const apiKey = key.body.key as string;

    const app = createApp(service.services, [...allRoutes, ping('none', '/bench/open'), ping('bearer', '/bench/closed')]);
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const load = (path: string, headers: Record<string, string> = {}) =>
      runLoad({ host: '127.0.0.1', port, method: 'GET', paths: [path], headers, concurrency: 32, warmupMs: 1000, durationMs: 4000 });

    report.info(BENCH, 'one constant GET handler, the full app around it; 32 keep-alive connections, 1 s warm-up + 4 s each');
    const open = await load('/api/bench/open');
    record(report, 'no credentials', open);
    await settle();
    const withJwt = await load('/api/bench/closed', { Authorization: `Bearer ${jwt}` });
    record(report, 'JWT', withJwt);
    await settle();
    const withKey = await load('/api/bench/closed', { Authorization: `Bearer ${apiKey}` });
    record(report, 'API key', withKey);
    const rate = (r: LoadResult) => r.requests / r.elapsedMs;
    report.figure(BENCH, 'JWT throughput as a share of no credentials', (rate(withJwt) / rate(open)) * 100, '%', { digits: 1 });
    report.figure(BENCH, 'API key throughput as a share of no credentials', (rate(withKey) / rate(open)) * 100, '%', { digits: 1 });
  } finally {
    if (server) await new Promise<void>((resolve) => { server!.close(() => resolve()); server!.closeAllConnections(); });
    await service?.stop();
  }
}

function record(report: Report, label: string, r: LoadResult) {
  if (r.failures) report.info(BENCH, `${label}: ${r.failures} failed requests (first: ${r.firstFailure})`);
  report.figure(BENCH, `${label}: throughput`, (r.requests / r.elapsedMs) * 1000, 'req/s', { digits: 0, note: `${fmt(r.requests, 0)} requests` });
  const l = latency(r.latencies);
  report.figure(BENCH, `${label}: latency p50`, l.p50, 'ms', { digits: 2 });
  report.figure(BENCH, `${label}: latency p99`, l.p99, 'ms', { digits: 2 });
}
