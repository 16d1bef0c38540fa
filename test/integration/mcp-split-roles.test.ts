import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { everythingStdio } from '../support/mcp-servers.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes } from '../support/test-service.js';

/**
 * Connections live in the worker role: an API process that holds none serves connect and tool
 * calls through events; a worker killed with SIGKILL is replaced by a new one, which reopens the
 * connection lazily on the next call (the state still says connected).
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP MCP split roles: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

(distributed ? describe : describe.skip)('MCP across split roles (api, projector, worker)', function () {
  this.timeout(150_000);
  const processes: ServiceProcess[] = [];
  let dataDir: string;
  after(async () => {
    for (const p of processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('the API serves calls on connections held by the worker; a replaced worker reconnects lazily', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'flowsvc-mcp-roles-'));
    const id = randomBytes(4).toString('hex');
    const env = {
      DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn',
      MONGODB_URL: process.env.MONGODB_URL!, MONGODB_DB: `mcproles_${id}`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS!, KAFKA_TOPIC_PREFIX: `mcproles-${id}`,
      JWT_SECRET: `mcp-split-roles-secret-${id}-0123456789abcdef`, ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RATE_LIMIT_AUTH_PER_MINUTE: '1000', MCP_STDIO_ALLOWLIST: `node,${process.execPath}`, MCP_PING_INTERVAL_MS: '1000',
    };
    const [api, projector, worker] = await Promise.all((['api', 'projector', 'worker'] as const).map((role) => startServiceProcess(env, ['--role', role])));
    processes.push(api, projector, worker);
    const user = await registerUser(api.baseUrl);
    const as = (method: string, path: string, body?: unknown) => call(api.baseUrl, method, path, body, user.auth);

    const created = await as('POST', '/mcp/servers', everythingStdio({ env: { SOME_TOKEN: 'secret-in-worker-only' } }));
    expect(created.status, created.text).to.equal(201);
    const serverId = created.body.server.id;
    const connected = await as('POST', `/mcp/servers/${serverId}/connect`);
    expect(connected.status, connected.text).to.equal(200);
    expect(connected.body.server.state).to.equal('connected');
    const echo = await as('POST', `/mcp/servers/${serverId}/tools/call`, { name: 'echo', arguments: { message: 'from the api' } });
    expect(echo.status, echo.text).to.equal(200);
    expect(echo.body.result.text).to.include('from the api');

    worker.child.kill('SIGKILL');
    await worker.exited;
    const replacement = await startServiceProcess(env, ['--role', 'worker']);
    processes.push(replacement);
    const again = await as('POST', `/mcp/servers/${serverId}/tools/call`, { name: 'get-sum', arguments: { a: 20, b: 22 } });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.result.text).to.include('42');
    expect((await as('GET', `/mcp/servers/${serverId}`)).body.server.state).to.equal('connected');
  });
});
