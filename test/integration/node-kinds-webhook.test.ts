import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { nodeKindsFor, type ExecutionContext, type NodeKindPorts } from '../../consumers/runs-kinds/index.js';
import { sealSecret } from '../../domain/flows/secrets.js';
import type { RunNode } from '../../domain/runs/index.js';
import { SealedBox } from '../../infra/auth/sealed-box.js';
import { loadConfig } from '../../infra/config/index.js';
import { outboundHttp } from '../../infra/http/outbound.js';
import { systemClock } from '../../ports/clock.js';

/** The webhook kind against a real HTTP server on 127.0.0.1. */

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

function portsWith(env: Record<string, string>): NodeKindPorts {
  return { settings: loadConfig(env), outbound: outboundHttp, clock: systemClock } as unknown as NodeKindPorts;
}

function context(input: unknown, extra: Partial<ExecutionContext> = {}): ExecutionContext {
  return {
    processId: 'p1',
    flowId: 'f1',
    orgId: null,
    signal: new AbortController().signal,
    inputs: { q: 'cats', token: 's3cret' },
    previous: input,
    nodes: { a: { output: { id: 42 } } },
    variables: { region: 'eu' },
    input,
    ...extra,
  };
}

const webhook = (data: Record<string, unknown>): RunNode => ({ id: 'w', data: { nodeType: 'webhook', ...data } as RunNode['data'] });

async function failureOf(promise: Promise<unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected the node to fail');
}

describe('webhook node kind (real HTTP on loopback)', () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  const open = nodeKindsFor(portsWith({ ALLOW_PRIVATE_NETWORK: 'true', NODE_TIMEOUT_MS: '2000' }));
  const closed = nodeKindsFor(portsWith({ ALLOW_PRIVATE_NETWORK: 'false' }));

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        const path = (req.url ?? '').split('?')[0];
        if (path === '/json') return void res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'set-cookie': 'sid=1', etag: '"v1"' }).end(JSON.stringify({ ok: true, n: 1 }));
        if (path === '/text') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('plain answer');
        if (path === '/empty') return void res.writeHead(204).end();
        if (path === '/badjson') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{nope');
        if (path === '/fail') return void res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
        if (path === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 1_500);
        res.writeHead(404).end('no such path');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
  });

  it('POSTs the input as JSON by default, with templated URL and headers; parses a JSON answer', async () => {
    const node = webhook({ webhookConfig: { url: `${base}/json?q={{inputs.q}}&r={{variables.region}}`, headers: { Authorization: 'Bearer {{inputs.token}}', 'X-Id': '{{nodes.a.output.id}}' } } });
    const result = await open.webhook.execute(node, context({ text: 'hi' }));
    expect(result.output).to.deep.equal({ ok: true, n: 1 });
    expect(seen[0].method).to.equal('POST');
    expect(seen[0].url).to.equal('/json?q=cats&r=eu');
    expect(seen[0].headers.authorization).to.equal('Bearer s3cret');
    expect(seen[0].headers['x-id']).to.equal('42');
    expect(seen[0].headers['content-type']).to.equal('application/json');
    expect(JSON.parse(seen[0].body)).to.deep.equal({ text: 'hi' });
    const metadata = result.metadata as Record<string, unknown>;
    expect(metadata.status).to.equal(200);
    expect(metadata.method).to.equal('POST');
    expect(metadata.durationMs).to.be.a('number');
    expect(metadata.url, 'no query string in the metadata: it may hold keys').to.equal(`${base}/json?…`);
    expect(metadata.headers).to.deep.equal({ 'content-type': 'application/json; charset=utf-8', etag: '"v1"' });
  });

  it('renders bodyTemplate as the body; GET sends none; text answers stay text; empty is null', async () => {
    const put = await open.webhook.execute(webhook({ webhookConfig: { url: `${base}/text`, method: 'PUT' }, bodyTemplate: 'query={{inputs.q}}' }), context('x'));
    expect(put.output).to.equal('plain answer');
    expect(seen[0].method).to.equal('PUT');
    expect(seen[0].body).to.equal('query=cats');
    expect(seen[0].headers['content-type']).to.equal('text/plain; charset=utf-8');
    const get = await open.webhook.execute(webhook({ webhookConfig: { url: `${base}/empty`, method: 'GET' } }), context({ a: 1 }));
    expect(get.output).to.equal(null);
    expect(seen[1].method).to.equal('GET');
    expect(seen[1].body).to.equal('');
    expect((get.metadata as { status: number }).status).to.equal(204);
  });

  it('keeps a JSON-labelled body that does not parse as text, and says so', async () => {
    const result = await open.webhook.execute(webhook({ webhookConfig: { url: `${base}/badjson` } }), context(null));
    expect(result.output).to.equal('{nope');
    expect((result.metadata as Record<string, unknown>).invalidJson).to.equal(true);
  });

  it('fails the node with WEBHOOK_HTTP_<status> on a non-2xx answer', async () => {
    const err = await failureOf(open.webhook.execute(webhook({ webhookConfig: { url: `${base}/fail` } }), context(null)));
    expect(err.code).to.equal('WEBHOOK_HTTP_503');
    expect(err.details).to.include({ status: 503, body: 'down for maintenance' });
    expect((await failureOf(open.webhook.execute(webhook({ webhookConfig: { url: `${base}/nowhere` } }), context(null)))).code).to.equal('WEBHOOK_HTTP_404');
  });

  it('times out after webhookConfig.timeout ms, and never waits longer than NODE_TIMEOUT_MS', async () => {
    let started = Date.now();
    const err = await failureOf(open.webhook.execute(webhook({ webhookConfig: { url: `${base}/slow`, timeout: 200 } }), context(null)));
    expect(err.code).to.equal('OUTBOUND_TIMEOUT');
    expect(Date.now() - started).to.be.below(1_000);
    const capped = nodeKindsFor(portsWith({ ALLOW_PRIVATE_NETWORK: 'true', NODE_TIMEOUT_MS: '300' }));
    started = Date.now();
    expect((await failureOf(capped.webhook.execute(webhook({ webhookConfig: { url: `${base}/slow`, timeout: 60_000 } }), context(null)))).code).to.equal('OUTBOUND_TIMEOUT');
    expect(Date.now() - started).to.be.below(1_200);
  });

  it('stops when the run is stopped', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const err = await failureOf(open.webhook.execute(webhook({ webhookConfig: { url: `${base}/slow` } }), context(null, { signal: controller.signal })));
    expect(err.code).to.equal('OUTBOUND_ABORTED');
  });

  it('refuses loopback when ALLOW_PRIVATE_NETWORK is false, before sending anything', async () => {
    const err = await failureOf(closed.webhook.execute(webhook({ webhookConfig: { url: `${base}/json` } }), context(null)));
    expect(err.code).to.equal('OUTBOUND_ADDRESS_REFUSED');
    expect(seen).to.have.length(0);
  });

  it('opens sealed header values (templates inside them too) in the process that calls; another key fails the node', async () => {
    const box = new SealedBox(randomBytes(32));
    const withKey = nodeKindsFor({ ...portsWith({ ALLOW_PRIVATE_NETWORK: 'true' }), secrets: box } as NodeKindPorts);
    const node = webhook({ webhookConfig: { url: `${base}/json`, headers: { Authorization: sealSecret('Bearer {{inputs.token}}', (p) => box.seal(p)), 'X-Plain': 'kept' } } });
    await withKey.webhook.execute(node, context(null));
    expect(seen[0].headers.authorization).to.equal('Bearer s3cret');
    expect(seen[0].headers['x-plain'], 'a value stored in clear (older events) is sent as it is').to.equal('kept');
    const otherKey = nodeKindsFor({ ...portsWith({ ALLOW_PRIVATE_NETWORK: 'true' }), secrets: new SealedBox(randomBytes(32)) } as NodeKindPorts);
    const failure = await failureOf(otherKey.webhook.execute(node, context(null)));
    expect(failure.code).to.equal('NODE_SECRET_UNREADABLE');
    expect(seen.length, 'nothing sent with an unreadable secret').to.equal(1);
  });

  it('fails clearly without a URL', async () => {
    expect((await failureOf(open.webhook.execute(webhook({ webhookConfig: {} }), context(null)))).code).to.equal('WEBHOOK_URL_MISSING');
  });
});
