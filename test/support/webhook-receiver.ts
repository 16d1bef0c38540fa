import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

/**
 * A webhook endpoint on loopback for tests: every request is verified with the official
 * `standardwebhooks` library (as a receiver of ours would do it) and recorded. What it answers is
 * up to the test (`respond`), per request: a status with headers, after a delay, or never.
 */
export interface ReceivedDelivery {
  webhookId: string;
  timestamp: number;
  signature: string;
  body: string;
  /** The parsed body, when the signature verified. */
  payload: { type: string; timestamp: number; session: string; data: Record<string, any> } | null;
  verified: boolean;
  verifyError: string | null;
  receivedAt: number;
  /** What the receiver answered (null: it never answered). */
  answeredStatus: number | null;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Keep the request open until the receiver closes (a hung endpoint). */
  hang?: boolean;
}

/** `attempt` counts requests with this webhook-id, 1-based. */
export type Responder = (delivery: ReceivedDelivery, attempt: number) => Answer;

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, in arrival order (retries included). */
  received: ReceivedDelivery[];
  respond: Responder;
  /** Requests answered 2xx, one per webhook-id (the receiver-side de-duplication). */
  accepted(): Map<string, ReceivedDelivery>;
  waitFor<T>(what: string, probe: () => T | null | undefined | false, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

/**
 * `secret` is the secret given to the service. A plain secret is used as its UTF-8 bytes
 * (`format: 'raw'`); a `whsec_…` secret in Standard Webhooks' own base64 form.
 */
export async function startWebhookReceiver(secret: string, respond: Responder = () => ({ status: 200 }), port = 0): Promise<WebhookReceiver> {
  const verifier = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  const hung = new Set<ServerResponse>();
  const perId = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    respond,
    accepted() {
      const out = new Map<string, ReceivedDelivery>();
      for (const d of receiver.received) if (d.answeredStatus !== null && d.answeredStatus >= 200 && d.answeredStatus < 300 && !out.has(d.webhookId)) out.set(d.webhookId, d);
      return out;
    },
    async waitFor(what, probe, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = probe();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received ${receiver.received.length} request(s)`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      for (const res of hung) res.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = { 'webhook-id': String(req.headers['webhook-id'] ?? ''), 'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''), 'webhook-signature': String(req.headers['webhook-signature'] ?? '') };
      const delivery: ReceivedDelivery = {
        webhookId: headers['webhook-id'],
        timestamp: Number(headers['webhook-timestamp']),
        signature: headers['webhook-signature'],
        body,
        payload: null,
        verified: false,
        verifyError: null,
        receivedAt: Date.now(),
        answeredStatus: null,
      };
      try {
        delivery.payload = verifier.verify(body, headers) as ReceivedDelivery['payload'];
        delivery.verified = true;
      } catch (err) {
        delivery.verifyError = (err as Error).message;
      }
      receiver.received.push(delivery);
      const attempt = (perId.get(delivery.webhookId) ?? 0) + 1;
      perId.set(delivery.webhookId, attempt);
      const answer: Answer = delivery.verified ? receiver.respond(delivery, attempt) : { status: 401 };
      if (answer.hang) {
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return;
      }
      const send = () => {
        delivery.answeredStatus = answer.status;
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...(answer.headers ?? {}) });
        res.end('ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  receiver.port = (server.address() as { port: number }).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}
