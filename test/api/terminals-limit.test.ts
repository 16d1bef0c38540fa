import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { TestClock } from '../support/clock.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';

const LIMIT = 2;
const OFFLINE_AFTER = 300;

/** REMOTE_MAX_TERMINALS_PER_USER (issue 37 item 6): a per-user slot stream bounds the live terminals. */
for (const mode of availableModes()) {
  describe(`remote terminals per user limit (${mode})`, function () {
    this.timeout(90_000);
    let svc: TestService;
    let clock: TestClock;

    before(async () => {
      clock = new TestClock();
      svc = await startTestService(mode, { REMOTE_MAX_TERMINALS_PER_USER: String(LIMIT), REMOTE_TERMINAL_LEASE_SECONDS: '30', REMOTE_TERMINAL_OFFLINE_AFTER: String(OFFLINE_AFTER) }, { clock });
    });
    after(async () => svc?.stop());

    const register = (user: RegisteredUser, name: string) => call(svc.baseUrl, 'POST', '/remote/terminals', { name, host: 'h' }, user.auth);

    it('answers 409 TOO_MANY_TERMINALS past the limit; a disconnect frees a slot; reconnecting needs one', async () => {
      const alice = await registerUser(svc.baseUrl);
      const one = await register(alice, 'one');
      const two = await register(alice, 'two');
      expect(one.status, one.text).to.equal(201);
      expect(two.status, two.text).to.equal(201);
      const three = await register(alice, 'three');
      expect(three.status, three.text).to.equal(409);
      expect(three.body.error.code).to.equal('TOO_MANY_TERMINALS');
      expect(three.body.error.details.limit).to.equal(LIMIT);

      // Another user's terminals do not count.
      const bob = await registerUser(svc.baseUrl);
      expect((await register(bob, 'bob')).status).to.equal(201);

      const gone = await call(svc.baseUrl, 'DELETE', `/remote/terminals/${one.body.terminal.id}`, undefined, alice.auth);
      expect(gone.status, gone.text).to.equal(200);
      const again = await call(svc.baseUrl, 'DELETE', `/remote/terminals/${one.body.terminal.id}`, undefined, alice.auth);
      expect(again.status, again.text).to.equal(200);
      const four = await register(alice, 'four');
      expect(four.status, four.text).to.equal(201);

      // The disconnected one cannot come back while both slots are live.
      const beat = await call(svc.baseUrl, 'POST', `/remote/terminals/${one.body.terminal.id}/heartbeat`, undefined, alice.auth);
      expect(beat.status, beat.text).to.equal(409);
      expect(beat.body.error.code).to.equal('TOO_MANY_TERMINALS');
      const shown = await call(svc.baseUrl, 'GET', `/remote/terminals/${one.body.terminal.id}`, undefined, alice.auth);
      expect(shown.body.terminal.connected).to.equal(false);

      // A live one's heartbeat is never refused.
      const live = await call(svc.baseUrl, 'POST', `/remote/terminals/${two.body.terminal.id}/heartbeat`, undefined, alice.auth);
      expect(live.status, live.text).to.equal(200);
      await call(svc.baseUrl, 'DELETE', `/remote/terminals/${four.body.terminal.id}`, undefined, alice.auth);
      const back = await call(svc.baseUrl, 'POST', `/remote/terminals/${one.body.terminal.id}/heartbeat`, undefined, alice.auth);
      expect(back.status, back.text).to.equal(200);
      expect(back.body.terminal.connected).to.equal(true);
    });

    it('concurrent registrations never exceed the limit', async () => {
      const carol = await registerUser(svc.baseUrl);
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => register(carol, `t${i}`)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses, answers.map((a) => a.text).join('\n')).to.deep.equal([201, 201, 409, 409, 409, 409]);
      const list = await call(svc.baseUrl, 'GET', '/remote/terminals', undefined, carol.auth);
      expect(list.body.items).to.have.length(LIMIT);
    });

    it('a terminal silent for REMOTE_TERMINAL_OFFLINE_AFTER gives its slot to a new registration', async () => {
      const dave = await registerUser(svc.baseUrl);
      const a = await register(dave, 'a');
      expect(a.status).to.equal(201);
      clock.advance(100_000);
      const b = await register(dave, 'b');
      expect(b.status).to.equal(201);
      expect((await register(dave, 'c')).status).to.equal(409);
      clock.advance((OFFLINE_AFTER - 100) * 1000);
      // `a` is now silent for OFFLINE_AFTER, `b` is not.
      const c = await register(dave, 'c');
      expect(c.status, c.text).to.equal(201);
      const shown = await call(svc.baseUrl, 'GET', `/remote/terminals/${a.body.terminal.id}`, undefined, dave.auth);
      expect(shown.body.terminal.connected).to.equal(false);
      expect((await register(dave, 'd')).status).to.equal(409);
    });
  });
}
