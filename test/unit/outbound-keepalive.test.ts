import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { createOutboundHttp, OutboundError } from '../../infra/http/outbound.js';
import { poolKey } from '../../infra/http/pinned-pool.js';
import { webhookSender } from '../../infra/messaging-webhooks/sender.js';

/**
 * Outbound keep-alive (issue 21, item 9): N sequential calls to one host share one TCP
 * connection, through the outbound port (webhook nodes) and the messaging webhook sender, and a
 * pooled connection is reused only for a call whose own DNS check gave the same address.
 */

interface CountingServer {
  server: Server;
  port: number;
  /** TCP connections accepted. */
  connections: number;
  requests: number;
  close(): Promise<void>;
}

async function countingServer(host: string, port = 0, onRequest?: (socket: Socket, nth: number) => boolean): Promise<CountingServer> {
  const perSocket = new WeakMap<Socket, number>();
  const counting: CountingServer = {
    server: createServer((req, res) => {
      counting.requests++;
      const nth = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, nth);
      req.resume();
      req.on('end', () => {
        if (onRequest && !onRequest(req.socket, nth)) return;
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`ok ${host}`);
      });
    }),
    port: 0,
    connections: 0,
    requests: 0,
    close: () => new Promise<void>((resolve) => counting.server.close(() => resolve())),
  };
  counting.server.on('connection', () => counting.connections++);
  await new Promise<void>((resolve) => counting.server.listen(port, host, resolve));
  counting.port = (counting.server.address() as { port: number }).port;
  return counting;
}

const open = { timeoutMs: 2_000, allowPrivateNetwork: true };

describe('outbound keep-alive pinned to the checked address', function () {
  this.timeout(20_000);
  const N = 10;
  const clients: Array<{ close?(): void }> = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close?.();
  });
  const client = (options: Parameters<typeof createOutboundHttp>[0]) => {
    const c = createOutboundHttp(options);
    clients.push(c);
    return c;
  };

  it(`${N} sequential calls to one host open one connection; without keep-alive, ${N}`, async () => {
    const server = await countingServer('127.0.0.1');
    try {
      const pooled = client({ keepAlive: true });
      for (let i = 0; i < N; i++) expect((await pooled.fetch(`http://127.0.0.1:${server.port}/n${i}`, { ...open, method: 'POST', body: `{"i":${i}}` })).status).to.equal(200);
      expect(server.connections).to.equal(1);
      expect(server.requests).to.equal(N);

      const single = client({ keepAlive: false });
      for (let i = 0; i < N; i++) await single.fetch(`http://127.0.0.1:${server.port}/n${i}`, open);
      expect(server.connections).to.equal(1 + N);
    } finally {
      await server.close();
    }
  });

  it('a new DNS answer gets a new connection, never the one opened to the old address', async () => {
    const a = await countingServer('127.0.0.1');
    const b = await countingServer('127.0.0.2', a.port);
    try {
      let answer: LookupAddress = { address: '127.0.0.1', family: 4 };
      const asked: string[] = [];
      const pooled = client({ keepAlive: true, resolve: async (host) => (asked.push(host), [answer]) });
      const url = `http://hook.test:${a.port}/x`;
      for (let i = 0; i < 3; i++) expect((await pooled.fetch(url, open)).address).to.equal('127.0.0.1');
      expect([a.connections, a.requests, b.connections]).to.deep.equal([1, 3, 0]);
      expect(asked, 'the name is resolved and checked on every call, pooled or not').to.deep.equal(['hook.test', 'hook.test', 'hook.test']);

      answer = { address: '127.0.0.2', family: 4 }; // the name now points elsewhere (rebinding, or a real move)
      const moved = await pooled.fetch(url, open);
      expect(moved.address).to.equal('127.0.0.2');
      expect(moved.body.toString()).to.equal('ok 127.0.0.2');
      expect([a.connections, a.requests], 'the old connection was not used').to.deep.equal([1, 3]);
      expect([b.connections, b.requests]).to.deep.equal([1, 1]);
      await pooled.fetch(url, open);
      expect([b.connections, b.requests]).to.deep.equal([1, 2]);

      answer = { address: '127.0.0.1', family: 4 };
      expect((await pooled.fetch(url, open)).body.toString()).to.equal('ok 127.0.0.1');
      expect([a.connections, a.requests], 'back to the first address: its own pooled connection').to.deep.equal([1, 4]);

      // An open connection never stands in for the check: a refused answer is refused, nothing is sent.
      const err = await pooled.fetch(url, { ...open, addressAllowed: (ip) => ip !== '127.0.0.1' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OutboundError);
      expect((err as OutboundError).code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      const closed = await pooled.fetch(url, { ...open, allowPrivateNetwork: false }).catch((e: unknown) => e);
      expect((closed as OutboundError).code).to.equal('OUTBOUND_ADDRESS_REFUSED');
      expect(a.requests).to.equal(4);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keys pooled connections by scheme, host, port, checked IP and TLS servername', () => {
    const ip = (address: string): LookupAddress => ({ address, family: 4 });
    const key = poolKey(new URL('https://hooks.example.com/a'), ip('93.184.216.34'));
    expect(key).to.equal('https:|hooks.example.com|443|93.184.216.34|hooks.example.com');
    expect(poolKey(new URL('https://hooks.example.com/other?q=1'), ip('93.184.216.34')), 'path and query do not matter').to.equal(key);
    for (const other of [
      poolKey(new URL('https://hooks.example.com/a'), ip('93.184.216.35')),
      poolKey(new URL('https://hooks.example.com:8443/a'), ip('93.184.216.34')),
      poolKey(new URL('http://hooks.example.com/a'), ip('93.184.216.34')),
      poolKey(new URL('https://other.example.com/a'), ip('93.184.216.34')),
    ]) {
      expect(other).to.not.equal(key);
    }
    expect(poolKey(new URL('https://93.184.216.34/a'), ip('93.184.216.34')), 'no SNI for an IP literal').to.equal('https:|93.184.216.34|443|93.184.216.34|');
  });

  it('a pooled connection the server dropped is retried once on a fresh one', async () => {
    // Answers the first request of each connection, then drops the connection on the next one unanswered.
    const server = await countingServer('127.0.0.1', 0, (socket, nth) => {
      if (nth === 1) return true;
      socket.destroy();
      return false;
    });
    try {
      const pooled = client({ keepAlive: true });
      const url = `http://127.0.0.1:${server.port}/x`;
      expect((await pooled.fetch(url, { ...open, method: 'POST', body: 'one' })).status).to.equal(200);
      expect((await pooled.fetch(url, { ...open, method: 'POST', body: 'two' })).status).to.equal(200);
      expect(server.connections).to.equal(2);
      expect(server.requests).to.equal(3);
    } finally {
      await server.close();
    }
  });

  it(`the messaging webhook sender: ${N} deliveries to one receiver over one connection`, async () => {
    const server = await countingServer('127.0.0.1');
    try {
      const http = client({ keepAlive: true });
      const sender = webhookSender({ sealedBox: { open: (sealed: string) => sealed }, timeoutMs: 2_000, allowPrivateNetwork: true, http });
      for (let i = 0; i < N; i++) {
        const outcome = await sender.send({ url: `http://127.0.0.1:${server.port}/hook`, secretSealed: 'whsec_c2VjcmV0', messageId: `msg_${i}`, body: `{"n":${i}}`, sentAt: new Date(), signal: new AbortController().signal });
        expect(outcome).to.include({ kind: 'answered', statusCode: 200 });
      }
      expect(server.connections).to.equal(1);
      expect(server.requests).to.equal(N);
    } finally {
      await server.close();
    }
  });
});
