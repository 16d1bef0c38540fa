import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { recordDeadLetter } from '../../commands/operations-dead-letters.js';
import { executeWorkerCommand } from '../../commands/workers.js';
import { deadLetterStreamId } from '../../domain/operations/dead-letters.js';
import { KafkaBus } from '../../infra/bus/kafka.js';
import { topicFor } from '../../infra/bus/kafka-topics.js';
import { consumerRunner } from '../../projections/workers.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Consumer } from '../../ports/bus.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';

/**
 * A test-only consumer that fails on the probes we poison, run by the bus beside the real ones:
 * after CONSUMER_MAX_ATTEMPTS its event becomes a dead letter that operators list, retry while the
 * cause persists (another attempt is recorded), then retry once it is fixed (resolved).
 */
for (const mode of availableModes()) {
  describe(`admin dead letters (${mode})`, function () {
    this.timeout(120_000);
    const run = Date.now().toString(36);
    const consumerName = `flaky-${run}`;
    const operatorEmail = `operator-dl-${run}@example.test`;
    const poisoned = new Set<string>();
    /** Probes whose failure text holds a NUL byte (FerretDB refuses NUL in strings). */
    const nulPoisoned = new Set<string>();
    const handled: RecordedEvent[] = [];
    let broken = true;
    const flaky: Consumer = {
      name: consumerName,
      categories: ['probe'],
      async handle(event) {
        if (event.type !== 'ProbeCreated') return;
        const name = (event.data as { name: string }).name;
        if (nulPoisoned.has(name)) throw new Error(`bad\u0000byte in ${name}`);
        if (broken && poisoned.has(name)) throw new Error(`poisoned probe ${name}`);
        handled.push(event);
      },
    };
    let svc: TestService;
    let operator: RegisteredUser;
    const list = (query = '', auth = operator.auth) => call(svc.baseUrl, 'GET', `/admin/dead-letters${query}`, undefined, auth);

    before(async () => {
      // A shorter wait for a retry's outcome than the default, for the test of a retry no worker answers.
      svc = await startTestService(mode, { ADMIN_EMAILS: operatorEmail, CONSUMER_MAX_ATTEMPTS: '2', ADMIN_REBUILD_WAIT_MS: '8000' }, { consumers: [flaky] });
      operator = await registerUser(svc.baseUrl, { email: operatorEmail });
    });
    after(async () => svc?.stop());

    it('records the event a consumer keeps failing on, lists it, retries it, and resolves it once fixed', async () => {
      const names = [`poison-a ${run}`, `poison-b ${run}`];
      names.forEach((n) => poisoned.add(n));
      const probeIds: string[] = [];
      for (const name of names) probeIds.push((await call(svc.baseUrl, 'POST', '/probes', { name })).body.probe.id);
      const healthy = (await call(svc.baseUrl, 'POST', '/probes', { name: `healthy ${run}` })).body.probe.id;

      const listed = await waitUntil('two dead letters listed', async () => {
        const res = await list(`?consumer=${consumerName}`);
        return res.status === 200 && res.body.deadLetters.length === 2 ? res.body : null;
      }, 60_000);
      // The consumer went on past the poisoned events.
      await waitUntil('the healthy probe handled', async () => handled.some((e) => e.streamId === `probe-${healthy}`));
      const letter = listed.deadLetters.find((l: { event: { streamId: string } }) => l.event.streamId === `probe-${probeIds[0]}`);
      expect(letter).to.include({ consumer: consumerName, status: 'open', attempts: 2, retries: 0, resolvedAt: null });
      expect(letter.lastError).to.equal(`poisoned probe ${names[0]}`);
      expect(letter.event).to.include({ type: 'ProbeCreated', revision: 0 });
      expect(letter.id).to.match(/^[a-f0-9]{32}$/);
      expect(Date.parse(letter.firstFailedAt)).to.be.at.most(Date.parse(letter.lastFailedAt));
      const [created] = await svc.services.eventStore.readStream(`probe-${probeIds[0]}`);
      expect(letter.event).to.deep.equal({ id: created.id, type: 'ProbeCreated', streamId: created.streamId, revision: 0, position: created.position });
      // The metric: durable counts per consumer in the list, and this process's counter in /health.
      expect(listed.counts[consumerName]).to.deep.equal({ open: 2, resolved: 0, discarded: 0 });
      expect(letter).to.include({ kind: 'event', message: null, discardedAt: null, discardReason: null });
      const health = await call(svc.baseUrl, 'GET', '/health');
      expect(health.body.ports.bus.detail).to.include(`dead letters recorded here: ${consumerName}=2`);

      // Paginated like the other lists.
      const first = await list(`?consumer=${consumerName}&limit=1`);
      expect(first.body.deadLetters).to.have.length(1);
      expect(first.body.nextCursor).to.be.a('string');
      const second = await list(`?consumer=${consumerName}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
      expect(second.body.deadLetters).to.have.length(1);
      expect(second.body.deadLetters[0].id).to.not.equal(first.body.deadLetters[0].id);
      expect((await list('?consumer=nobody-here')).body.deadLetters).to.deep.equal([]);

      // Still broken: the retry runs the handler once, fails, and records another attempt.
      const failed = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/retry`, undefined, operator.auth);
      expect(failed.status, failed.text).to.equal(200);
      expect(failed.body).to.include({ outcome: 'failed', error: `poisoned probe ${names[0]}` });
      expect(failed.body.deadLetter).to.include({ status: 'open', attempts: 3, retries: 1 });

      // Fixed: the retry delivers it and the letter is resolved; the handler saw the original event.
      broken = false;
      const resolved = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/retry`, undefined, operator.auth);
      expect(resolved.status, resolved.text).to.equal(200);
      expect(resolved.body.outcome).to.equal('resolved');
      expect(resolved.body.deadLetter).to.include({ status: 'resolved', attempts: 3, retries: 2 });
      expect(resolved.body.deadLetter.resolvedAt).to.be.a('string');
      expect(handled.filter((e) => e.id === created.id)).to.have.length(1);

      const after = await list(`?consumer=${consumerName}`);
      expect(after.body.counts[consumerName]).to.deep.equal({ open: 1, resolved: 1, discarded: 0 });
      expect((await list(`?consumer=${consumerName}&status=resolved`)).body.deadLetters.map((l: { id: string }) => l.id)).to.deep.equal([letter.id]);
      expect((await list(`?consumer=${consumerName}&status=open`)).body.deadLetters).to.have.length(1);

      const again = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/retry`, undefined, operator.auth);
      expect(again.status).to.equal(409);
      expect(again.body.error.code).to.equal('DEAD_LETTER_RESOLVED');

      // The history is in the log, with who asked.
      const history = await svc.services.eventStore.readStream(deadLetterStreamId(letter.id));
      expect(history.map((e) => e.type)).to.deep.equal(['EventDeadLettered', 'DeadLetterRetryRequested', 'DeadLetterRetryFailed', 'DeadLetterRetryRequested', 'DeadLetterResolved']);
      expect(history[1].metadata.actorId).to.equal(operator.user.id);
    });

    it('is for operators only, and validates the id', async () => {
      const stranger = await registerUser(svc.baseUrl);
      const denied = await list('', stranger.auth);
      expect(denied.status).to.equal(403);
      expect(denied.body.error.code).to.equal('OPERATOR_ONLY');
      const deniedRetry = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/retry`, undefined, stranger.auth);
      expect(deniedRetry.status).to.equal(403);
      expect((await call(svc.baseUrl, 'GET', '/admin/dead-letters')).status).to.equal(401);
      expect((await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/retry`)).status).to.equal(401);

      const unknown = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/retry`, undefined, operator.auth);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('DEAD_LETTER_NOT_FOUND');
      const bad = await call(svc.baseUrl, 'POST', '/admin/dead-letters/not-an-id/retry', undefined, operator.auth);
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.fields[0].field).to.equal('params.id');
      const badLimit = await list('?limit=0');
      expect(badLimit.status).to.equal(400);
    });

    it('keeps a letter whose error holds NUL (escaped), and discards it: it leaves the open list and is not retried', async () => {
      const name = `nul ${run}`;
      nulPoisoned.add(name);
      const probeId = (await call(svc.baseUrl, 'POST', '/probes', { name })).body.probe.id;
      const letter = await waitUntil('the NUL letter listed', async () => {
        const res = await list(`?consumer=${consumerName}&status=open`);
        return res.body.deadLetters?.find((l: { event: { streamId: string } | null }) => l.event?.streamId === `probe-${probeId}`) ?? null;
      }, 60_000);
      expect(letter.lastError).to.equal(`bad\\u0000byte in ${name}`);

      const discarded = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/discard`, { reason: 'a test poison' }, operator.auth);
      expect(discarded.status, discarded.text).to.equal(200);
      expect(discarded.body.deadLetter).to.include({ id: letter.id, status: 'discarded', discardReason: 'a test poison' });
      expect(discarded.body.deadLetter.discardedAt).to.be.a('string');
      const open = (await list(`?consumer=${consumerName}&status=open`)).body.deadLetters.map((l: { id: string }) => l.id);
      expect(open).to.not.include(letter.id);
      expect((await list(`?consumer=${consumerName}&status=discarded`)).body.deadLetters.map((l: { id: string }) => l.id)).to.deep.equal([letter.id]);
      expect((await list(`?consumer=${consumerName}`)).body.counts[consumerName].discarded).to.equal(1);

      // Discarding again is the same outcome; a discarded letter is not retried.
      const again = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/discard`, undefined, operator.auth);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.deadLetter).to.include({ status: 'discarded', discardReason: 'a test poison' });
      const retry = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${letter.id}/retry`, undefined, operator.auth);
      expect(retry.status).to.equal(409);
      expect(retry.body.error.code).to.equal('DEAD_LETTER_DISCARDED');
      const history = await svc.services.eventStore.readStream(deadLetterStreamId(letter.id));
      expect(history.map((e) => e.type)).to.deep.equal(['EventDeadLettered', 'DeadLetterDiscarded']);
      expect(history[1].metadata.actorId).to.equal(operator.user.id);
    });

    it('discard: operators only, 404 for an unknown letter, 400 for a bad reason', async () => {
      const stranger = await registerUser(svc.baseUrl);
      const denied = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/discard`, undefined, stranger.auth);
      expect(denied.status).to.equal(403);
      expect((await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/discard`)).status).to.equal(401);
      const unknown = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/discard`, {}, operator.auth);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('DEAD_LETTER_NOT_FOUND');
      const bad = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/discard`, { reason: 'x'.repeat(501) }, operator.auth);
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.fields[0].field).to.equal('body.reason');
      const unknownField = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${'0'.repeat(32)}/discard`, { why: 'x' }, operator.auth);
      expect(unknownField.status).to.equal(400);
    });

    /** A letter of `consumer` recorded directly, as a worker that ran it would have. */
    async function letterOf(consumer: string): Promise<string> {
      const probeId = (await call(svc.baseUrl, 'POST', '/probes', { name: `letter for ${consumer}` })).body.probe.id;
      const [event] = await svc.services.eventStore.readStream(`probe-${probeId}`);
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() };
      const at = new Date();
      const { state } = await recordDeadLetter(svc.services.eventStore, context, { consumer, event: { id: event.id, type: event.type, streamId: event.streamId, revision: event.revision, position: event.position }, error: 'boom', attempts: 2, firstFailedAt: at, lastFailedAt: at });
      expect(state.exists).to.equal(true);
      const listed = await waitUntil('the letter listed', async () => (await list(`?consumer=${consumer}`)).body.deadLetters?.[0] ?? null);
      return listed.id;
    }

    it('refuses a retry for a consumer no live worker runs (409 CONSUMER_NOT_RUNNING), rather than a 202 nobody acts on', async () => {
      const id = await letterOf(`retired-${run}`);
      const res = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${id}/retry`, undefined, operator.auth);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error.code).to.equal('CONSUMER_NOT_RUNNING');
      expect(res.body.error.message).to.include(`retired-${run}`);
      // Nothing was queued.
      expect((await svc.services.eventStore.readStream(deadLetterStreamId(id))).map((e) => e.type)).to.deep.equal(['EventDeadLettered']);
    });

    it('says a retry stays queued when a worker runs the consumer but none answered within the wait', async () => {
      const consumer = `elsewhere-${run}`;
      // A live worker in another process announces it runs this consumer; no worker here does.
      const workerId = `elsewhere:${run}`;
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() };
      await executeWorkerCommand(svc.services.eventStore, context, workerId, { type: 'StartWorker', workerId, host: 'elsewhere', pid: 1, role: 'worker', heartbeatMs: 600_000, consumers: [consumer] });
      await waitUntil('the other worker projected', async () => (await consumerRunner(svc.services.readStore, consumer, new Date(), 5_000)) === 'running');
      const id = await letterOf(consumer);
      const res = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${id}/retry`, undefined, operator.auth);
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.include({ status: 'retrying', queued: true });
      expect(res.body.message).to.include('stays queued');
      expect((await svc.services.eventStore.readStream(deadLetterStreamId(id))).map((e) => e.type)).to.deep.equal(['EventDeadLettered', 'DeadLetterRetryRequested']);
      await executeWorkerCommand(svc.services.eventStore, { ...context, now: new Date() }, workerId, { type: 'StopWorker' });
    });

    if (mode === 'distributed') {
      it('dead-letters a Kafka message that is no event, with its raw bytes, and goes on past it', async () => {
        const bus = svc.services.bus as KafkaBus;
        const topic = topicFor(svc.services.config.KAFKA_TOPIC_PREFIX, 'probe');
        const garbage = Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x22, 0x0a, 0x00, 0x41]); // NUL, invalid UTF-8, half a JSON object
        const notAnEvent = Buffer.from(JSON.stringify({ hello: run }));
        const huge = Buffer.alloc(70_000, 0x78); // "xxx…": not JSON, and past the 64 KiB kept
        const producer = bus.kafka.producer();
        await producer.connect();
        try {
          await producer.send({ topic, messages: [{ key: `garbage-${run}`, value: garbage }, { key: `not-an-event-${run}`, value: notAnEvent }, { key: `huge-${run}`, value: huge }] });
        } finally {
          await producer.disconnect();
        }
        // The consumer went on past them: a probe created after them is handled.
        const after = (await call(svc.baseUrl, 'POST', '/probes', { name: `after garbage ${run}` })).body.probe.id;
        await waitUntil('the probe after the garbage handled', async () => handled.some((e) => e.streamId === `probe-${after}`), 60_000);

        type Letter = { id: string; kind: string; event: unknown; status: string; lastError: string; message: { topic: string; partition: number; offset: string; key: string | null; valueBase64: string; size: number; truncated: boolean } };
        const letters: Letter[] = await waitUntil('three undecodable letters listed', async () => {
          const res = await list(`?consumer=${consumerName}&status=open&limit=100`);
          const found = (res.body.deadLetters as Letter[]).filter((l) => l.kind === 'undecodable');
          return found.length === 3 ? found : null;
        }, 60_000);
        const byKey = (key: string) => letters.find((l) => l.message.key === key)!;
        const g = byKey(`garbage-${run}`);
        expect(g).to.include({ event: null, status: 'open' });
        expect(g.message).to.include({ topic, valueBase64: garbage.toString('base64'), size: garbage.length, truncated: false });
        expect(g.message.offset).to.match(/^\d+$/);
        expect(g.message.partition).to.be.a('number');
        expect(byKey(`not-an-event-${run}`).message.valueBase64).to.equal(notAnEvent.toString('base64'));
        expect(byKey(`not-an-event-${run}`).lastError).to.equal('kafka message value is not a RecordedEvent');
        const h = byKey(`huge-${run}`).message;
        expect(h).to.include({ size: 70_000, truncated: true });
        expect(Buffer.from(h.valueBase64, 'base64')).to.deep.equal(huge.subarray(0, 64 * 1024));

        // Nothing to deliver again: only discard closes it.
        const retry = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${g.id}/retry`, undefined, operator.auth);
        expect(retry.status).to.equal(409);
        expect(retry.body.error.code).to.equal('DEAD_LETTER_NOT_RETRIABLE');
        const discarded = await call(svc.baseUrl, 'POST', `/admin/dead-letters/${g.id}/discard`, { reason: 'garbage from the test producer' }, operator.auth);
        expect(discarded.status, discarded.text).to.equal(200);
        expect(discarded.body.deadLetter).to.include({ kind: 'undecodable', status: 'discarded' });
        expect(discarded.body.deadLetter.message.valueBase64).to.equal(garbage.toString('base64'));
      });
    }
  });
}
