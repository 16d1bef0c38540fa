import { expect } from 'chai';
import { deadLetterStreamId } from '../../domain/operations/dead-letters.js';
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
    const handled: RecordedEvent[] = [];
    let broken = true;
    const flaky: Consumer = {
      name: consumerName,
      categories: ['probe'],
      async handle(event) {
        if (event.type !== 'ProbeCreated') return;
        const name = (event.data as { name: string }).name;
        if (broken && poisoned.has(name)) throw new Error(`poisoned probe ${name}`);
        handled.push(event);
      },
    };
    let svc: TestService;
    let operator: RegisteredUser;
    const list = (query = '', auth = operator.auth) => call(svc.baseUrl, 'GET', `/admin/dead-letters${query}`, undefined, auth);

    before(async () => {
      svc = await startTestService(mode, { ADMIN_EMAILS: operatorEmail, CONSUMER_MAX_ATTEMPTS: '2' }, { consumers: [flaky] });
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
      expect(listed.counts[consumerName]).to.deep.equal({ open: 2, resolved: 0 });
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
      expect(after.body.counts[consumerName]).to.deep.equal({ open: 1, resolved: 1 });
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
  });
}
