import { expect } from 'chai';
import { call } from '../support/http.js';
import { TestClock } from '../support/clock.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { FORM_APP, greeterFlow, seedApp, waitForDeployment } from './apps-deploy-support.js';

for (const mode of availableModes()) {
  describe(`app preview expiry and build limits (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let flowId: string;
    const clock = new TestClock();

    before(async () => {
      svc = await startTestService(mode, { APPS_PREVIEW_TTL_SECONDS: '600' }, { clock });
      owner = await registerUser(svc.baseUrl);
      flowId = await greeterFlow(svc, owner);
    });
    after(async () => svc?.stop());

    it('a preview URL dies at its expiry; a new preview replaces the previous one', async () => {
      const appId = await seedApp(svc, owner, FORM_APP, flowId);
      const before = clock.now().getTime();
      const first = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(first.status, first.text).to.equal(201);
      const expiresAt = Date.parse(first.body.expiresAt);
      expect(expiresAt).to.be.within(before + 600_000, clock.now().getTime() + 600_000);
      expect((await fetch(first.body.url)).status).to.equal(200);
      clock.advance(expiresAt - clock.now().getTime() - 5_000);
      expect((await fetch(first.body.url)).status).to.equal(200);
      clock.advance(5_000);
      expect((await fetch(first.body.url)).status).to.equal(404);

      const second = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      const third = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(third.body.url).not.to.equal(second.body.url);
      expect((await fetch(second.body.url)).status).to.equal(404);
      expect((await fetch(third.body.url)).status).to.equal(200);
      // Bad paths: traversal and a wrong app id answer 404 without reaching any file.
      expect((await fetch(`${third.body.url}%2e%2e/%2e%2e/a/${appId}/`)).status).to.equal(404);
      expect((await fetch(third.body.url.replace(appId, '00000000-0000-0000-0000-000000000000'))).status).to.equal(404);
      // No trailing slash: redirected to the site root, so relative URLs resolve.
      const bare = await fetch(third.body.url.slice(0, -1), { redirect: 'manual' });
      expect(bare.status).to.equal(308);
      expect(bare.headers.get('location')).to.equal(new URL(third.body.url).pathname);
    });

    it('fails a build past its output size or time limit', async () => {
      for (const [env, code] of [[{ APPS_BUILD_MAX_OUTPUT_BYTES: '1000' }, 'APP_BUILD_TOO_LARGE'], [{ APPS_BUILD_TIMEOUT_MS: '1' }, 'APP_BUILD_TIMEOUT']] as const) {
        const limited = await startTestService(mode, env);
        try {
          const user = await registerUser(limited.baseUrl);
          const appId = await seedApp(limited, user, FORM_APP, null);
          const preview = await call(limited.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, user.auth);
          expect(preview.status, preview.text).to.equal(422);
          expect(preview.body.error.code).to.equal(code);
          expect((await call(limited.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, user.auth)).status).to.equal(202);
          const deployed = await waitForDeployment(limited, user, appId);
          expect(deployed.status).to.equal('ERROR');
          expect(deployed.latest.error.code).to.equal(code);
        } finally {
          await limited.stop();
        }
      }
    });

    it('a deployment without a linked flow serves its files and answers 409 to flow calls', async () => {
      const appId = await seedApp(svc, owner, FORM_APP, null);
      expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth)).status).to.equal(202);
      const deployed = await waitForDeployment(svc, owner, appId);
      expect((await fetch(deployed.url)).status).to.equal(200);
      const res = await fetch(`${deployed.url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"who":"x"}' });
      expect(res.status).to.equal(409);
      expect((await res.json()).error.code).to.equal('APP_FLOW_NOT_LINKED');
      expect((await fetch(deployed.url, { method: 'DELETE' })).status).to.equal(405);
    });
  });
}
