/**
 * Messaging webhooks: what a delivery costs end to end, with a receiver on loopback that verifies
 * every request with the standardwebhooks library (in this process, so it shares the CPU).
 *  a) deliveries/s: N MessageReceived events appended to a session's stream at once (as the
 *     provider records them), timed until the receiver accepted all N: dispatcher → delivery
 *     stream → timer wheel → signed POST → attempt recorded;
 *  b) latency from `POST /api/messaging/sessions/{id}/messages` (one at a time) to the webhook's
 *     arrival at the receiver, p50 and p99.
 * Embedded; the same on the distributed configuration (Kafka bus, MongoDB read model) when
 * KAFKA_BROKERS and MONGODB_URL are set. Each configuration first runs (a) alone with
 * OUTBOUND_KEEP_ALIVE=false (a new TCP connection per attempt, as before issue 21), then the
 * whole bench with keep-alive on, and prints both deliveries/s with the TCP connections opened.
 * Issue 18's aim: deliveries/s on Kafka + MongoDB-wire within 2× of embedded, the same burst in
 * the same run (printed as the ratio distributed ÷ embedded, target ≥ 0.5).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { msgSessionStreamId } from '../../domain/messaging/events.js';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startTestService, type Mode, type TestService } from '../support/test-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { fmt, latency, now, settle, type Report } from './support.js';

const BENCH = 'messaging webhooks';

export interface MessagingBenchOptions {
  /** Events appended at once for the throughput figure. */
  burst: number;
  /** Messages sent one after another for the latency figure. */
  sends: number;
  /** The latency phase stops after this long even if fewer than `sends` were made (keeps the run short on a loaded machine). */
  latencyBudgetMs: number;
  /** …but not before this many were measured, so p50/p99 mean something. */
  minSends: number;
  timeoutMs: number;
}

/** Sized so the whole run (both configurations) stays within about 40 s on a shared 2-vCPU machine. */
export const defaults: MessagingBenchOptions = { burst: 300, sends: 100, latencyBudgetMs: 5_000, minSends: 30, timeoutMs: 30_000 };

/** Issue 18: the distributed figure within 2× of embedded, i.e. distributed ÷ embedded ≥ 0.5. */
const WITHIN_2X = { op: '>=', value: 0.5 } as const;

export async function benchMessaging(report: Report, o: MessagingBenchOptions = defaults): Promise<void> {
  const embeddedOff = await benchMode(report, 'embedded', o, false);
  await settle();
  const embeddedOn = await benchMode(report, 'embedded', o, true);
  await settle();
  if (process.env.KAFKA_BROKERS && process.env.MONGODB_URL) {
    const distributedOff = await benchMode(report, 'distributed', o, false);
    await settle();
    const distributedOn = await benchMode(report, 'distributed', o, true);
    const ratio = (label: string, d: ModeFigures | null, e: ModeFigures | null, target?: typeof WITHIN_2X) => {
      if (!d || !e) return report.skip(BENCH, label, 'a configuration failed (see above)', target, '×');
      report.figure(BENCH, label, d.deliveriesPerSecond / e.deliveriesPerSecond, '×', { digits: 2, target, note: `${fmt(d.deliveriesPerSecond)} /s distributed vs ${fmt(e.deliveriesPerSecond)} /s embedded, burst of ${fmt(o.burst)}, same run` });
    };
    ratio('deliveries/s, Kafka + MongoDB ÷ embedded (keep-alive on)', distributedOn, embeddedOn, WITHIN_2X);
    ratio('deliveries/s, Kafka + MongoDB ÷ embedded (keep-alive off)', distributedOff, embeddedOff);
    if (distributedOn?.arrivalP50 !== undefined && embeddedOn?.arrivalP50 !== undefined) {
      report.info(BENCH, `send → arrival p50: ${fmt(distributedOn.arrivalP50)} ms distributed vs ${fmt(embeddedOn.arrivalP50)} ms embedded (the Kafka relay and consumer hop)`);
    }
  } else report.skip(BENCH, 'deliveries/s, Kafka + MongoDB ÷ embedded (keep-alive on)', 'KAFKA_BROKERS and MONGODB_URL are not set', WITHIN_2X, '×');
}

interface ModeFigures {
  deliveriesPerSecond: number;
  arrivalP50?: number;
}

/** With keep-alive off only the burst (a) is measured: the before figure. */
/** TCP connections this process opened to the receiver (Node publishes every client socket on `net.client.socket`). */
let connections = 0;
let countConnectionsTo = -1;
const onClientSocket = (message: unknown) => {
  const { socket } = message as { socket: Socket };
  socket.once('connect', () => {
    if (socket.remotePort === countConnectionsTo) connections++;
  });
};

async function benchMode(report: Report, mode: Mode, o: MessagingBenchOptions, keepAlive: boolean): Promise<ModeFigures | null> {
  subscribe('net.client.socket', onClientSocket);
  let service: TestService | null = null;
  let receiver: WebhookReceiver | null = null;
  const label = `${mode === 'embedded' ? 'embedded' : 'Kafka + MongoDB'}, keep-alive ${keepAlive ? 'on' : 'off'}`;
  const t0 = now();
  try {
    service = await startTestService(mode, { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000', ALLOW_PRIVATE_NETWORK: 'true', OUTBOUND_KEEP_ALIVE: String(keepAlive) });
    const secret = `bench-${randomBytes(8).toString('hex')}`;
    receiver = await startWebhookReceiver(secret);
    countConnectionsTo = receiver.port;
    connections = 0;
    const user = await registerUser(service.baseUrl);
    const as = (method: string, path: string, body?: unknown) => call(service!.baseUrl, method, path, body, user.auth);
    const sessions: Array<{ id: string; address: string }> = [];
    for (const name of ['bench-sender', 'bench-target']) {
      const res = await as('POST', '/messaging/sessions', { name: `${name}-${randomBytes(3).toString('hex')}` });
      if (res.status !== 201) throw new Error(`session: ${res.status} ${res.text}`);
      sessions.push({ id: res.body.session.id, address: res.body.session.address });
    }
    const [sender, target] = sessions;
    const hook = await as('POST', `/messaging/sessions/${target.id}/webhook`, { url: receiver.url, events: ['message'], secret });
    if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${hook.text}`);
    report.info(BENCH, `${label}: service up and webhook configured in ${fmt((now() - t0) / 1000, 1)} s`);
    report.info(BENCH, `${label}: concurrency ${service.services.config.WEBHOOK_CONCURRENCY} attempts in flight; receiver verifies every signature`);

    // a) a burst of received messages, as the provider appends them.
    const before = receiver.accepted().size;
    const at = new Date().toISOString();
    const events = Array.from({ length: o.burst }, (_, i) => {
      const id = randomUUID();
      return {
        id: randomUUID(),
        type: 'MessageReceived',
        data: { sessionId: target.id, message: { id, chatId: sender.address, from: sender.address, to: target.address, text: `burst ${i}`, timestamp: at, fromMe: false as const }, at },
        metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: id, causationId: null, requestId: null, occurredAt: at },
      };
    });
    const connectionsBefore = connections;
    const started = now();
    for (let i = 0; i < events.length; i += 100) await service.services.eventStore.append(msgSessionStreamId(target.id), events.slice(i, i + 100), 'any');
    await receiver.waitFor(`${o.burst} deliveries`, () => receiver!.accepted().size - before >= o.burst, o.timeoutMs);
    const elapsed = now() - started;
    const figures: ModeFigures = { deliveriesPerSecond: (o.burst / elapsed) * 1000 };
    report.figure(BENCH, `deliveries/s, burst of ${fmt(o.burst)} events (${label})`, figures.deliveriesPerSecond, '/s', { note: `${fmt(connections - connectionsBefore)} TCP connections opened` });
    await settle();
    if (!keepAlive) return figures;

    // b) send → arrival, one message at a time.
    const sendOne = async (text: string) => {
      const t0 = Date.now();
      const res = await as('POST', `/messaging/sessions/${sender.id}/messages`, { chatId: target.address, text });
      if (res.status !== 201) throw new Error(`send: ${res.status} ${res.text}`);
      const arrived = await receiver!.waitFor('the message', () => receiver!.received.find((d) => d.payload?.data.text === text), 30_000);
      return arrived.receivedAt - t0;
    };
    // One unmeasured send first: the burst may still be draining behind it (acks, projections).
    report.info(BENCH, `${label}: warm-up send arrived after ${fmt(await sendOne(`warm-up ${randomBytes(3).toString('hex')}`))} ms (not counted)`);
    const samples: number[] = [];
    const latencyStarted = now();
    for (let i = 0; i < o.sends && (i < o.minSends || now() - latencyStarted < o.latencyBudgetMs); i++) {
      samples.push(await sendOne(`latency ${i} ${randomBytes(3).toString('hex')}`));
    }
    const l = latency(samples);
    report.info(BENCH, `${label}: ${samples.length} sends measured one after another in ${fmt((now() - latencyStarted) / 1000, 1)} s`);
    report.figure(BENCH, `send → webhook arrival p50 (${label})`, l.p50, 'ms');
    report.figure(BENCH, `send → webhook arrival p99 (${label})`, l.p99, 'ms');
    const unverified = receiver.received.filter((d) => !d.verified).length;
    if (unverified > 0) report.info(BENCH, `${unverified} request(s) failed verification`);
    return { ...figures, arrivalP50: l.p50 };
  } catch (err) {
    const cause = (err as Error & { cause?: Error }).cause;
    report.fail(BENCH, `${label}: ${(err as Error).message}${cause ? ` (${cause.message})` : ''}`);
    return null;
  } finally {
    unsubscribe('net.client.socket', onClientSocket);
    countConnectionsTo = -1;
    const stopping = now();
    await receiver?.close();
    await service?.stop();
    report.info(BENCH, `${label}: stopped in ${fmt((now() - stopping) / 1000, 1)} s; this configuration took ${fmt((now() - t0) / 1000, 1)} s`);
  }
}
