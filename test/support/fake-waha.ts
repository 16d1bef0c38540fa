import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A small WAHA server on loopback, speaking the routes our adapter uses, modelled on WAHA's
 * documented shapes: sessions (create/start/stop/get/delete/me), `/api/{session}/auth/qr`, chats,
 * chat messages, groups, `POST /api/sendText`, `POST /api/sendSeen`; it requires `X-Api-Key` and
 * posts webhook events (`session.status`, `message`, `message.ack`) to each session's configured
 * webhooks, signed as WAHA does (`X-Webhook-Hmac`: hex HMAC-SHA512 of the body with the hmac key).
 */
export interface FakeWahaRequest {
  method: string;
  path: string;
  apiKey: string | undefined;
  body: any;
}

interface FakeMessage {
  id: string;
  timestamp: number;
  from: string;
  to: string;
  fromMe: boolean;
  body: string;
  ack: number;
}

interface FakeSession {
  name: string;
  status: 'STOPPED' | 'STARTING' | 'SCAN_QR_CODE' | 'WORKING' | 'FAILED';
  me: { id: string; pushName: string } | null;
  qr: string;
  webhooks: Array<{ url: string; events: string[]; hmac?: { key: string } }>;
  messages: FakeMessage[];
  groups: Array<{ id: string; name: string; participants: Array<{ id: string }> }>;
}

export interface FakeWaha {
  url: string;
  apiKey: string;
  requests: FakeWahaRequest[];
  /** Webhook posts made and the status our service answered. */
  deliveries: Array<{ event: string; session: string; status: number }>;
  session(name: string): FakeSession | undefined;
  /** The phone scanned the QR: WORKING, with `me`, and a `session.status` event. */
  scan(name: string): Promise<number>;
  /** Someone wrote to the session: stores it and posts a `message` event; resolves the webhook's answer. */
  receive(name: string, message: { from: string; body: string; id?: string }): Promise<{ status: number; id: string }>;
  addGroup(name: string, group: { id: string; name: string; participants: string[] }): void;
  close(): Promise<void>;
}

export async function startFakeWaha(options: { apiKey?: string } = {}): Promise<FakeWaha> {
  const apiKey = options.apiKey ?? `waha-${randomBytes(8).toString('hex')}`;
  const sessions = new Map<string, FakeSession>();
  const requests: FakeWahaRequest[] = [];
  const deliveries: FakeWaha['deliveries'] = [];
  const pending = new Set<Promise<unknown>>();

  async function post(session: FakeSession, event: string, payload: unknown): Promise<number> {
    let last = 0;
    for (const hook of session.webhooks) {
      if (!hook.events.includes(event) && !hook.events.includes('*')) continue;
      const body = JSON.stringify({
        id: `evt_${randomBytes(8).toString('hex')}`,
        timestamp: Date.now(),
        event,
        session: session.name,
        me: session.me ?? undefined,
        engine: 'NOWEB',
        payload,
      });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'X-Webhook-Request-Id': randomBytes(8).toString('hex'), 'X-Webhook-Timestamp': String(Date.now()) };
      if (hook.hmac?.key) {
        headers['X-Webhook-Hmac'] = createHmac('sha512', hook.hmac.key).update(body).digest('hex');
        headers['X-Webhook-Hmac-Algorithm'] = 'sha512';
      }
      const res = await fetch(hook.url, { method: 'POST', headers, body });
      await res.text();
      deliveries.push({ event, session: session.name, status: res.status });
      last = res.status;
    }
    return last;
  }
  /** Fire and forget, like WAHA, one session's events in order, tracked so close() waits for them. */
  const queues = new Map<string, Promise<unknown>>();
  function postLater(session: FakeSession, event: string, payload: unknown) {
    const previous = queues.get(session.name) ?? Promise.resolve();
    const p = previous.then(() => new Promise((r) => setTimeout(r, 20))).then(() => post(session, event, payload)).catch(() => undefined);
    queues.set(session.name, p);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }

  function setStatus(session: FakeSession, status: FakeSession['status']) {
    session.status = status;
    postLater(session, 'session.status', { status });
  }

  const info = (s: FakeSession) => ({ name: s.name, status: s.status, me: s.me, config: { webhooks: s.webhooks }, engine: { engine: 'NOWEB' } });

  async function route(req: IncomingMessage, body: any): Promise<[number, unknown]> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    requests.push({ method, path, apiKey: req.headers['x-api-key'] as string | undefined, body });
    if (req.headers['x-api-key'] !== apiKey) return [401, { message: 'Unauthorized' }];
    let m: RegExpExecArray | null;
    if (method === 'POST' && path === '/api/sessions') {
      if (sessions.has(body.name)) return [422, { message: `Session '${body.name}' already exists` }];
      const session: FakeSession = { name: body.name, status: 'STOPPED', me: null, qr: `2@${randomBytes(24).toString('base64')}`, webhooks: body.config?.webhooks ?? [], messages: [], groups: [] };
      sessions.set(session.name, session);
      if (body.start !== false) {
        session.status = 'STARTING';
        postLater(session, 'session.status', { status: 'STARTING' });
        // The engine is up and shows a QR right away (WAHA takes a moment; the adapter copes either way).
        setStatus(session, 'SCAN_QR_CODE');
      }
      return [201, info(session)];
    }
    if ((m = /^\/api\/sessions\/([^/]+)(\/(start|stop|me))?$/.exec(path))) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return [404, { message: 'Session not found' }];
      if (method === 'GET' && !m[3]) return [200, info(session)];
      if (method === 'GET' && m[3] === 'me') return [200, session.me];
      if (method === 'DELETE' && !m[3]) {
        sessions.delete(session.name);
        return [200, {}];
      }
      if (method === 'POST' && m[3] === 'start') {
        if (session.status === 'STOPPED') setStatus(session, session.me ? 'WORKING' : 'SCAN_QR_CODE');
        return [201, info(session)];
      }
      if (method === 'POST' && m[3] === 'stop') {
        setStatus(session, 'STOPPED');
        return [201, info(session)];
      }
    }
    if (method === 'GET' && (m = /^\/api\/([^/]+)\/auth\/qr$/.exec(path))) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return [404, { message: 'Session not found' }];
      if (session.status !== 'SCAN_QR_CODE') return [422, { message: 'not waiting for a QR scan' }];
      return [200, { value: session.qr }];
    }
    if (method === 'GET' && (m = /^\/api\/([^/]+)\/chats$/.exec(path))) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return [404, { message: 'Session not found' }];
      const ids = [...new Set(session.messages.map((x) => (x.fromMe ? x.to : x.from)))];
      return [200, ids.map((id) => ({ id, name: null, conversationTimestamp: session.messages.filter((x) => x.from === id || x.to === id).at(-1)?.timestamp }))];
    }
    if (method === 'GET' && (m = /^\/api\/([^/]+)\/chats\/([^/]+)\/messages$/.exec(path))) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return [404, { message: 'Session not found' }];
      const chatId = decodeURIComponent(m[2]);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      return [200, session.messages.filter((x) => x.from === chatId || x.to === chatId).reverse().slice(0, limit)];
    }
    if (method === 'GET' && (m = /^\/api\/([^/]+)\/groups$/.exec(path))) {
      const session = sessions.get(decodeURIComponent(m[1]));
      if (!session) return [404, { message: 'Session not found' }];
      return [200, session.groups];
    }
    if (method === 'POST' && path === '/api/sendText') {
      const session = sessions.get(body.session);
      if (!session) return [404, { message: 'Session not found' }];
      if (session.status !== 'WORKING') return [422, { message: `Session status is not as expected: ${session.status}` }];
      const message: FakeMessage = { id: `true_${body.chatId}_${randomBytes(10).toString('hex').toUpperCase()}`, timestamp: Math.floor(Date.now() / 1000), from: session.me!.id, to: body.chatId, fromMe: true, body: body.text, ack: 0 };
      session.messages.push(message);
      setTimeout(() => {
        message.ack = 1;
        postLater(session, 'message.ack', { id: message.id, from: message.to, to: message.from, fromMe: true, ack: 1, ackName: 'SERVER' });
      }, 10);
      return [201, { ...message, _data: {} }];
    }
    if (method === 'POST' && path === '/api/sendSeen') {
      const session = sessions.get(body.session);
      if (!session) return [404, { message: 'Session not found' }];
      return [201, {}];
    }
    return [404, { message: `no route ${method} ${path}` }];
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'bad json' }));
        return;
      }
      route(req, body).then(
        ([status, payload]) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload ?? null)),
        (err) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(err) })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    deliveries,
    session: (name) => sessions.get(name),
    async scan(name) {
      const session = sessions.get(name);
      if (!session) throw new Error(`fake WAHA: no session ${name}`);
      await queues.get(name);
      session.status = 'WORKING';
      session.me = { id: `1555${randomBytes(4).readUInt32BE() % 10_000_000}@c.us`, pushName: 'Fake Phone' };
      return post(session, 'session.status', { status: 'WORKING' });
    },
    async receive(name, input) {
      const session = sessions.get(name);
      if (!session) throw new Error(`fake WAHA: no session ${name}`);
      await queues.get(name);
      const id = input.id ?? `false_${input.from}_${randomBytes(10).toString('hex').toUpperCase()}`;
      const message: FakeMessage = { id, timestamp: Math.floor(Date.now() / 1000), from: input.from, to: session.me?.id ?? '', fromMe: false, body: input.body, ack: 1 };
      session.messages.push(message);
      const status = await post(session, 'message', { ...message, hasMedia: false });
      return { status, id };
    },
    addGroup(name, group) {
      sessions.get(name)?.groups.push({ id: group.id, name: group.name, participants: group.participants.map((id) => ({ id })) });
    },
    async close() {
      await Promise.all([...pending]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
