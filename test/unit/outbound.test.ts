import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { classifyAddress, isRefusedAddress, outboundFetch, OutboundError } from '../../infra/http/outbound.js';

/** The address policy of outbound HTTP (DESIGN.md section 7) and the fetch that enforces it. */

const TABLE: [string, string][] = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.216.34', 'public'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['100.63.255.255', 'public'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['100.128.0.0', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.0.9', 'loopback'],
  ['169.254.169.254', 'link_local'],
  ['172.15.255.255', 'public'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.0', 'public'],
  ['192.168.1.1', 'private'],
  ['192.169.0.1', 'public'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fe80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['febf::1', 'link_local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:169.254.169.254', 'link_local'],
  ['::ffff:8.8.8.8', 'public'],
  ['::127.0.0.1', 'loopback'],
  ['64:ff9b::192.168.0.1', 'private'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:c0a8:0101::1', 'private'],
  ['2001:db8::1', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:81c::200e', 'public'],
  ['not-an-ip', 'invalid'],
  ['1:2:3', 'invalid'],
];

describe('outbound address policy', () => {
  for (const [ip, cls] of TABLE) {
    it(`${ip} is ${cls}`, () => {
      expect(classifyAddress(ip)).to.equal(cls);
      expect(isRefusedAddress(ip)).to.equal(cls !== 'public');
    });
  }
});

describe('outboundFetch', () => {
  let server: Server;
  let base: string;
  let hits = 0;

  before(async () => {
    server = createServer((req, res) => {
      hits++;
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/hello') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
      if (url.pathname === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body: Buffer.concat(chunks).toString(), auth: req.headers.authorization ?? null })));
        return;
      }
      if (url.pathname === '/redirect') return void res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/echo' }).end();
      if (url.pathname === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
      if (url.pathname === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 2_000);
      if (url.pathname === '/big') return void res.writeHead(200).end('x'.repeat(10_000));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = { timeoutMs: 1_000, allowPrivateNetwork: true };

  async function failure(promise: Promise<unknown>): Promise<OutboundError> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(OutboundError);
      return err as OutboundError;
    }
    throw new Error('expected a failure');
  }

  it('refuses loopback when private networks are not allowed, without sending anything', async () => {
    const before = hits;
    const err = await failure(outboundFetch(`${base}/hello`, { timeoutMs: 1_000, allowPrivateNetwork: false }));
    expect(err.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
    expect(err.details.addressClass).to.equal('loopback');
    expect(hits).to.equal(before);
  });

  it('refuses a host name that resolves to loopback, and an IPv6 loopback literal', async () => {
    const port = new URL(base).port;
    expect((await failure(outboundFetch(`http://localhost:${port}/hello`, { timeoutMs: 1_000, allowPrivateNetwork: false }))).code).to.equal('OUTBOUND_ADDRESS_REFUSED');
    expect((await failure(outboundFetch(`http://[::1]:${port}/hello`, { timeoutMs: 1_000, allowPrivateNetwork: false }))).code).to.equal('OUTBOUND_ADDRESS_REFUSED');
    expect((await failure(outboundFetch(`http://[::ffff:127.0.0.1]:${port}/`, { timeoutMs: 1_000, allowPrivateNetwork: false }))).code).to.equal('OUTBOUND_ADDRESS_REFUSED');
  });

  it('reaches loopback when allowed, by address and by host name (pinned to the checked address)', async () => {
    const res = await outboundFetch(`${base}/hello`, open);
    expect(res.status).to.equal(200);
    expect(res.body.toString()).to.equal('hello');
    expect(res.address).to.equal('127.0.0.1');
    const byName = await outboundFetch(`http://localhost:${new URL(base).port}/hello`, open);
    expect(byName.body.toString()).to.equal('hello');
    expect(byName.address).to.equal('127.0.0.1');
  });

  it('refuses other schemes and broken URLs', async () => {
    expect((await failure(outboundFetch('file:///etc/passwd', open))).code).to.equal('OUTBOUND_INVALID_URL');
    expect((await failure(outboundFetch('not a url', open))).code).to.equal('OUTBOUND_INVALID_URL');
  });

  it('follows redirects by hand: 302 after POST becomes GET, 307 keeps the body, credentials dropped across origins', async () => {
    const res302 = await outboundFetch(`${base}/redirect?status=302`, { ...open, method: 'POST', body: 'payload', headers: { authorization: 'Bearer t' } });
    expect(res302.redirects).to.equal(1);
    expect(JSON.parse(res302.body.toString())).to.deep.equal({ method: 'GET', body: '', auth: 'Bearer t' });
    const res307 = await outboundFetch(`${base}/redirect?status=307`, { ...open, method: 'POST', body: 'payload' });
    expect(JSON.parse(res307.body.toString())).to.include({ method: 'POST', body: 'payload' });
    const other = `http://localhost:${new URL(base).port}/echo`;
    const cross = await outboundFetch(`${base}/redirect?status=307&to=${encodeURIComponent(other)}`, { ...open, method: 'POST', body: 'p', headers: { authorization: 'Bearer t' } });
    expect(JSON.parse(cross.body.toString()).auth, 'another origin does not get the credentials').to.equal(null);
  });

  it('stops after 5 redirects', async () => {
    expect((await failure(outboundFetch(`${base}/loop`, open))).code).to.equal('OUTBOUND_TOO_MANY_REDIRECTS');
  });

  it('checks every redirect hop, before connecting', async () => {
    const before = hits;
    const to = `http://[::1]:${new URL(base).port}/echo`;
    const err = await failure(outboundFetch(`${base}/redirect?to=${encodeURIComponent(to)}`, { ...open, addressAllowed: (ip) => ip === '127.0.0.1' }));
    expect(err.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
    expect(err.details.host).to.equal('::1');
    expect(hits - before, 'only the first hop was sent').to.equal(1);
  });

  it('times out with OUTBOUND_TIMEOUT', async () => {
    const started = Date.now();
    const err = await failure(outboundFetch(`${base}/slow`, { ...open, timeoutMs: 150 }));
    expect(err.code).to.equal('OUTBOUND_TIMEOUT');
    expect(Date.now() - started).to.be.below(1_500);
  });

  it('an aborted signal gives OUTBOUND_ABORTED', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await failure(outboundFetch(`${base}/slow`, { ...open, signal: controller.signal }));
    expect(err.code).to.equal('OUTBOUND_ABORTED');
    expect(err.name).to.equal('AbortError');
  });

  it('caps the response: an error by default, the first bytes with truncate', async () => {
    expect((await failure(outboundFetch(`${base}/big`, { ...open, maxResponseBytes: 1_000 }))).code).to.equal('OUTBOUND_RESPONSE_TOO_LARGE');
    const cut = await outboundFetch(`${base}/big`, { ...open, maxResponseBytes: 1_000, truncate: true });
    expect(cut.truncated).to.equal(true);
    expect(cut.body.length).to.equal(1_000);
    const whole = await outboundFetch(`${base}/big`, { ...open, maxResponseBytes: 10_000 });
    expect(whole.truncated).to.equal(false);
    expect(whole.body.length).to.equal(10_000);
  });
});
