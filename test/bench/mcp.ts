/**
 * MCP tool calls per second against server-everything's `echo`, over stdio and over Streamable
 * HTTP, measured two ways in the same run:
 *  a) the SDK client (`@modelcontextprotocol/sdk` Client) calling the server directly;
 *  b) through our API: `POST /api/mcp/servers/{id}/tools/call` on an embedded test service
 *     (auth, validation, a command and event per call, the worker's connection, read-your-writes).
 * The ratio direct / API is our overhead per call. Concurrency 1 and 8 (closed loop).
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { call } from '../support/http.js';
import { everythingPath, startEverythingHttp, type EverythingHttp } from '../support/mcp-client-servers.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { runLoad } from './load.js';
import { fmt, latency, now, settle, type Report } from './support.js';

const BENCH = 'mcp';

export interface McpBenchOptions {
  concurrencies: number[];
  warmupMs: number;
  durationMs: number;
}

export const defaults: McpBenchOptions = { concurrencies: [1, 8], warmupMs: 1_000, durationMs: 4_000 };

interface Rate {
  perSecond: number;
  p50: number;
  p99: number;
  failures: number;
}

/** Closed loop over the SDK client: `concurrency` callers, each calling again as soon as answered. */
async function direct(client: Client, concurrency: number, o: McpBenchOptions): Promise<Rate> {
  const samples: number[] = [];
  let failures = 0;
  let measuring = false;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const started = now();
      try {
        await client.callTool({ name: 'echo', arguments: { message: 'bench' } });
        if (measuring) samples.push(now() - started);
      } catch {
        if (measuring) failures++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((r) => setTimeout(r, o.warmupMs));
  measuring = true;
  const begin = now();
  await new Promise((r) => setTimeout(r, o.durationMs));
  measuring = false;
  const elapsed = now() - begin;
  stop = true;
  await Promise.all(workers);
  const l = latency(samples);
  return { perSecond: (samples.length / elapsed) * 1000, p50: l.p50, p99: l.p99, failures };
}

async function viaApi(service: TestService, auth: Record<string, string>, serverId: string, concurrency: number, o: McpBenchOptions): Promise<Rate> {
  const url = new URL(service.baseUrl);
  const result = await runLoad({
    host: url.hostname,
    port: Number(url.port),
    method: 'POST',
    paths: [`/api/mcp/servers/${serverId}/tools/call`],
    body: JSON.stringify({ name: 'echo', arguments: { message: 'bench' } }),
    headers: { ...auth, 'content-type': 'application/json' },
    concurrency,
    warmupMs: o.warmupMs,
    durationMs: o.durationMs,
  });
  if (result.firstFailure) throw new Error(`API calls failed: ${result.firstFailure}`);
  const l = latency(result.latencies);
  return { perSecond: (result.requests / result.elapsedMs) * 1000, p50: l.p50, p99: l.p99, failures: result.failures };
}

async function sdkClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

async function registerAndConnect(service: TestService, auth: Record<string, string>, body: Record<string, unknown>): Promise<string> {
  const created = await call(service.baseUrl, 'POST', '/mcp/servers', body, auth);
  if (created.status !== 201) throw new Error(`POST /mcp/servers answered ${created.status}: ${created.text}`);
  const id = created.body.server.id as string;
  const connected = await call(service.baseUrl, 'POST', `/mcp/servers/${id}/connect`, undefined, auth);
  if (connected.status !== 200 || connected.body.server.state !== 'connected') throw new Error(`connect answered ${connected.status}: ${connected.text}`);
  return id;
}

function record(report: Report, label: string, concurrency: number, d: Rate, a: Rate): void {
  report.figure(BENCH, `${label}, concurrency ${concurrency}: SDK client direct`, d.perSecond, 'calls/s', { note: `p50 ${fmt(d.p50, 2)} ms, p99 ${fmt(d.p99, 2)} ms` });
  report.figure(BENCH, `${label}, concurrency ${concurrency}: through our API`, a.perSecond, 'calls/s', {
    note: `p50 ${fmt(a.p50, 2)} ms, p99 ${fmt(a.p99, 2)} ms${a.failures ? `, ${a.failures} failures` : ''}`,
  });
  report.figure(BENCH, `${label}, concurrency ${concurrency}: direct ÷ API (our overhead)`, d.perSecond / a.perSecond, '×', { digits: 2 });
}

export async function benchMcp(report: Report, o: McpBenchOptions = defaults): Promise<void> {
  let service: TestService | null = null;
  let httpServer: EverythingHttp | null = null;
  const clients: Client[] = [];
  try {
    service = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true', MCP_STDIO_ALLOWLIST: process.execPath });
    const registered = await call(service.baseUrl, 'POST', '/auth/register', { email: `bench-mcp-${randomUUID()}@example.com`, password: 'correct horse battery', name: 'Bench' });
    if (registered.status !== 201) throw new Error(`register failed: ${registered.status} ${registered.text}`);
    const auth = { Authorization: `Bearer ${registered.body.token as string}` };
    httpServer = await startEverythingHttp('streamableHttp');

    const stdioId = await registerAndConnect(service, auth, { name: 'everything stdio', transport: 'stdio', command: process.execPath, args: [everythingPath(), 'stdio'] });
    const httpId = await registerAndConnect(service, auth, { name: 'everything http', transport: 'http', url: httpServer.url });
    const stdioClient = await sdkClient(new StdioClientTransport({ command: process.execPath, args: [everythingPath(), 'stdio'], stderr: 'ignore' }));
    const httpClient = await sdkClient(new StreamableHTTPClientTransport(new URL(httpServer.url)));
    clients.push(stdioClient, httpClient);
    report.info(BENCH, `server-everything echo; ${o.warmupMs / 1000} s warm-up + ${o.durationMs / 1000} s measured per figure; API = embedded service, same process as the direct client`);

    for (const [label, client, serverId] of [
      ['stdio', stdioClient, stdioId],
      ['Streamable HTTP', httpClient, httpId],
    ] as const) {
      for (const concurrency of o.concurrencies) {
        const d = await direct(client, concurrency, o);
        await settle();
        const a = await viaApi(service, auth, serverId, concurrency, o);
        await settle();
        record(report, label, concurrency, d, a);
      }
    }
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    await service?.stop();
    await httpServer?.kill();
  }
}
