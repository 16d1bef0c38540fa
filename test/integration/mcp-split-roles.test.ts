import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { everythingStdio } from '../support/mcp-servers.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
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
  let group: DistributedProcessGroup | null = null;
  after(async () => {
    await group?.stop();
  });

  it('the API serves calls on connections held by the worker; a replaced worker reconnects lazily', async () => {
    group = new DistributedProcessGroup('mcproles');
    const env = group.env({ ENCRYPTION_KEY: randomBytes(32).toString('hex'), MCP_STDIO_ALLOWLIST: `node,${process.execPath}`, MCP_PING_INTERVAL_MS: '1000' });
    const [api, projector, worker] = await group.start(env, ['api', 'projector', 'worker']);
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
    await group.start(env, ['worker']); // the replacement worker
    const again = await as('POST', `/mcp/servers/${serverId}/tools/call`, { name: 'get-sum', arguments: { a: 20, b: 22 } });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.result.text).to.include('42');
    expect((await as('GET', `/mcp/servers/${serverId}`)).body.server.state).to.equal('connected');
  });
});
