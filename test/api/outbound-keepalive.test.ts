import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { registerUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

/**
 * Webhook nodes through the service's outbound port (the container's keep-alive pool): N runs
 * calling one host open one TCP connection; with OUTBOUND_KEEP_ALIVE=false, one per call.
 */
const N = 5;

for (const mode of availableModes()) {
  describe(`webhook nodes reuse a kept-alive connection (${mode})`, function () {
    this.timeout(60_000);
    let receiver: Server;
    let url: string;
    let connections = 0;
    let requests = 0;

    before(async () => {
      receiver = createServer((req, res) => {
        requests++;
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
      });
      receiver.on('connection', () => connections++);
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    });
    after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

    for (const [keepAlive, expected] of [['true', 1], ['false', N]] as const) {
      it(`OUTBOUND_KEEP_ALIVE=${keepAlive}: ${N} sync runs of a webhook node open ${expected} connection(s)`, async () => {
        let svc: TestService | null = null;
        try {
          svc = await startTestService(mode, { ALLOW_PRIVATE_NETWORK: 'true', OUTBOUND_KEEP_ALIVE: keepAlive });
          const client = flowClient(() => svc!);
          const owner = await registerUser(svc.baseUrl);
          const flowId = await client.newFlow(owner);
          await client.addNode(owner, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'webhook', webhookConfig: { url } } });
          const [c0, r0] = [connections, requests];
          for (let i = 0; i < N; i++) {
            const res = await client.as(owner, 'POST', `/flows/${flowId}/run`, { inputs: { i } });
            expect(res.status, res.text).to.equal(200);
            expect(res.body.status, JSON.stringify(res.body.error)).to.equal('completed');
          }
          expect(requests - r0).to.equal(N);
          expect(connections - c0).to.equal(expected);
        } finally {
          await svc?.stop();
        }
      });
    }
  });
}
