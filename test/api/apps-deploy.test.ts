import { expect } from 'chai';
import { handleAtContextTime } from '../../commands/handle.js';
import { appDeployStreamId, deployDecider } from '../../domain/apps/deploy-decide.js';
import { appDeployer } from '../../consumers/apps-deploy.js';
import type { RunningConsumer } from '../../ports/bus.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { availableModes, startTestService, type TestService } from '../support/test-service.js';
import { FORM_APP, changeFiles, greeterFlow, originOf, seedApp, waitForDeployment } from './apps-deploy-support.js';

for (const mode of availableModes()) {
  describe(`app previews and deployments (${mode})`, function () {
    this.timeout(120_000);
    let svc: TestService;
    let owner: RegisteredUser;
    let stranger: RegisteredUser;
    let flowId: string;

    before(async () => {
      svc = await startTestService(mode, { APPS_PUBLIC_CALLS_PER_MINUTE: '1000' });
      owner = await registerUser(svc.baseUrl);
      stranger = await registerUser(svc.baseUrl);
      flowId = await greeterFlow(svc, owner);
    });
    after(async () => svc?.stop());

    it('previews the current files with strict headers, calls the flow with the token, and revokes at once', async () => {
      const appId = await seedApp(svc, owner, FORM_APP, flowId);
      const created = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(created.status, created.text).to.equal(201);
      const url: string = created.body.url;
      expect(url).to.match(/\/apps-public\/p\/[^/]+\/apv_[A-Za-z0-9_-]{40,}\/$/);
      expect(Date.parse(created.body.expiresAt)).to.be.greaterThan(Date.now());

      const page = await fetch(url);
      expect(page.status).to.equal(200);
      const html = await page.text();
      expect(html).to.contain('src="src/main.js"');
      expect(page.headers.get('content-security-policy')).to.contain("default-src 'self'").and.to.contain('sandbox allow-scripts');
      expect(page.headers.get('content-security-policy')).not.to.contain('allow-same-origin');
      expect(page.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
      expect(page.headers.get('set-cookie')).to.equal(null);
      const bundle = await fetch(`${url}src/main.js`);
      expect(bundle.headers.get('content-type')).to.contain('text/javascript');
      expect(await bundle.text()).to.contain('[${s}]');
      expect((await fetch(`${url}src/main.tsx`)).status).to.equal(404);
      const client = await (await fetch(`${url}app-client.js`)).text();
      expect(client).to.contain('"minLength":1').and.to.contain('AppClient');

      const answer = await fetch(`${url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ who: 'preview' }) });
      expect(answer.status).to.equal(200);
      expect((await answer.json()).output).to.equal('hi preview');

      // The preview follows the files.
      await changeFiles(svc, owner, appId, [{ path: 'style.css', content: 'body { color: red; }' }]);
      expect(await (await fetch(`${url}style.css`)).text()).to.equal('body { color: red; }');

      // A stranger cannot preview or revoke; the wrong token is a 404.
      expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, stranger.auth)).status).to.equal(404);
      expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/preview`, undefined, stranger.auth)).status).to.equal(404);
      expect((await fetch(url.replace(/apv_[^/]+/, 'apv_wrongtoken'))).status).to.equal(404);

      const revoked = await call(svc.baseUrl, 'DELETE', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(revoked.status, revoked.text).to.equal(200);
      expect((await fetch(url)).status).to.equal(404);
      expect((await fetch(`${url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"who":"x"}' })).status).to.equal(404);
      expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/preview`, undefined, owner.auth)).status).to.equal(404);
    });

    it('refuses a preview whose files do not build, naming file and line', async () => {
      const appId = await seedApp(svc, owner, [
        { path: 'index.html', content: '<script src="main.ts"></script>' },
        { path: 'main.ts', content: 'const a: number = 1;\nconst b = ;\n' },
      ], flowId);
      const res = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.error.code).to.equal('APP_BUILD_FAILED');
      expect(res.body.error.details.problems[0]).to.include({ file: 'main.ts', line: 2 });
      expect(res.body.error.message).to.contain('main.ts:2:');
    });

    it('deploys QUEUED → READY, serves the public URL, withdraws to 404 at once, and keeps the history', async () => {
      const appId = await seedApp(svc, owner, FORM_APP, flowId);
      const first = await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth);
      expect(first.status, first.text).to.equal(202);
      expect(first.body.deployment.status).to.equal('QUEUED');
      const ready = await waitForDeployment(svc, owner, appId);
      expect(ready.status).to.equal('READY');
      expect(ready.url).to.equal(`${originOf(svc)}/apps-public/a/${appId}/`);
      expect(ready.live.versionNumber).to.equal(1);
      expect(ready.live.log.join('\n')).to.contain('bundled src/main.js');
      expect(ready.live.timings.buildMs).to.be.a('number');
      expect(ready.live.startedAt).to.be.a('string');

      const page = await fetch(ready.url);
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-security-policy')).to.contain('sandbox');
      const etag = page.headers.get('etag')!;
      expect((await fetch(ready.url, { headers: { 'if-none-match': etag } })).status).to.equal(304);
      const answer = await fetch(`${ready.url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ who: 'public' }) });
      expect(answer.status).to.equal(200);
      const answered = await answer.json();
      expect(answered.output).to.equal('hi public');
      // The run was started by the deployment (its id in the run's events), for the flow's owner.
      const [started] = await svc.services.eventStore.readStream(`run-${answered.processId}`, { maxCount: 1 });
      expect(started.metadata.correlationId).to.equal(`deployment:${ready.live.deploymentId}`);
      expect(started.metadata.actorId).to.equal(null);
      // The server checks the contract too (the browser's check is for the user).
      const invalid = await fetch(`${ready.url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ who: '', extra: 1 }) });
      expect(invalid.status).to.equal(400);
      const invalidBody = await invalid.json();
      expect(invalidBody.error.code).to.equal('INVALID_INPUT');
      expect(invalidBody.error.details.errors.length).to.be.greaterThan(0);
      expect((await fetch(`${ready.url}_flow`, { method: 'OPTIONS' })).headers.get('access-control-allow-methods')).to.equal('POST');
      expect((await fetch(`${ready.url}../../a/${appId}/%2e%2e/x`)).status).to.equal(404);

      // A second deploy of changed files, then rollback to version 1; dates of earlier deployments do not move.
      await changeFiles(svc, owner, appId, [{ path: 'style.css', content: 'body { color: blue; }' }]);
      expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth)).status).to.equal(202);
      const second = await waitForDeployment(svc, owner, appId);
      expect(second.live.versionNumber).to.equal(2);
      expect(await (await fetch(`${second.url}style.css`)).text()).to.equal('body { color: blue; }');
      const rollback = await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, { versionId: ready.live.versionId }, owner.auth);
      expect(rollback.status, rollback.text).to.equal(202);
      const third = await waitForDeployment(svc, owner, appId);
      expect(third.live.versionNumber).to.equal(1);
      expect(await (await fetch(`${third.url}style.css`)).text()).to.equal('body { font-family: sans-serif; }');
      expect(third.history.map((d: any) => d.number)).to.deep.equal([3, 2, 1]);
      const firstNow = third.history.find((d: any) => d.deploymentId === ready.live.deploymentId);
      expect(firstNow).to.include({ requestedAt: ready.live.requestedAt, startedAt: ready.live.startedAt, finishedAt: ready.live.finishedAt, servedFrom: ready.live.servedFrom });
      expect(firstNow.servedUntil).to.be.a('string');

      // Redeploy rebuilds the live version.
      const again = await call(svc.baseUrl, 'POST', `/apps/${appId}/redeploy`, undefined, owner.auth);
      expect(again.status, again.text).to.equal(202);
      const fourth = await waitForDeployment(svc, owner, appId);
      expect(fourth.live).to.include({ versionNumber: 1, redeployOf: third.live.deploymentId });

      // Another tenant sees nothing.
      expect((await call(svc.baseUrl, 'GET', `/apps/${appId}/deploy`, undefined, stranger.auth)).status).to.equal(404);
      expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/deploy`, undefined, stranger.auth)).status).to.equal(404);
      expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, stranger.auth)).status).to.equal(404);

      const withdrawn = await call(svc.baseUrl, 'DELETE', `/apps/${appId}/deploy`, undefined, owner.auth);
      expect(withdrawn.status, withdrawn.text).to.equal(200);
      expect(withdrawn.body.withdrawn).to.equal(fourth.live.deploymentId);
      expect((await fetch(fourth.url)).status).to.equal(404);
      expect((await fetch(`${fourth.url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"who":"x"}' })).status).to.equal(404);
      const after = await call(svc.baseUrl, 'GET', `/apps/${appId}/deploy`, undefined, owner.auth);
      expect(after.body.url).to.equal(null);
      expect(after.body.history).to.have.length(4);
      expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/deploy`, undefined, owner.auth)).status).to.equal(404);
      expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/redeploy`, undefined, owner.auth)).status).to.equal(409);
    });

    it('records a build error with file and line as ERROR, and keeps serving the last good deployment', async () => {
      const appId = await seedApp(svc, owner, FORM_APP, flowId);
      await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth);
      const good = await waitForDeployment(svc, owner, appId);
      expect(good.status).to.equal('READY');
      await changeFiles(svc, owner, appId, [{ path: 'src/label.ts', content: 'export function label(s: string): string {\n  return s +;\n}\n' }]);
      await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth);
      const bad = await waitForDeployment(svc, owner, appId);
      expect(bad.status).to.equal('ERROR');
      expect(bad.latest.error.code).to.equal('APP_BUILD_FAILED');
      expect(bad.latest.error.problems[0]).to.include({ file: 'src/label.ts', line: 2 });
      expect(bad.latest.log.join('\n')).to.contain('src/label.ts:2:');
      expect(bad.live.deploymentId).to.equal(good.live.deploymentId);
      expect((await fetch(good.url)).status).to.equal(200);
    });

    it('rate-limits flow calls per IP on the public URL', async () => {
      const limited = await startTestService(mode, { APPS_PUBLIC_CALLS_PER_MINUTE: '2' });
      try {
        const user = await registerUser(limited.baseUrl);
        const flow = await greeterFlow(limited, user);
        const appId = await seedApp(limited, user, FORM_APP, flow);
        await call(limited.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, user.auth);
        const ready = await waitForDeployment(limited, user, appId);
        const post = () => fetch(`${ready.url}_flow`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"who":"r"}' });
        expect((await post()).status).to.equal(200);
        expect((await post()).status).to.equal(200);
        const third = await post();
        expect(third.status).to.equal(429);
        expect(third.headers.get('retry-after')).to.match(/^\d+$/);
        expect(third.headers.get('access-control-allow-origin')).to.equal('*');
      } finally {
        await limited.stop();
      }
    });

    it('survives a worker restart: a deployment left BUILDING is built again, one abandoned too often is failed', async () => {
      // The first worker has no app-deployer (it "died" in the builds); a worker started later takes the events up again.
      const svc2 = await startTestService(mode, {}, { withoutConsumers: ['app-deployer'] });
      let worker: RunningConsumer | undefined;
      try {
        const user = await registerUser(svc2.baseUrl);
        const flow = await greeterFlow(svc2, user);
        const resumedId = await seedApp(svc2, user, FORM_APP, flow);
        const abandonedId = await seedApp(svc2, user, FORM_APP, flow);
        for (const [appId, times] of [[resumedId, 1], [abandonedId, 3]] as const) {
          const res = await call(svc2.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, user.auth);
          expect(res.status, res.text).to.equal(202);
          for (let i = 0; i < times; i++) {
            await handleAtContextTime(svc2.services.eventStore, { actorId: null, orgId: null, workspaceId: null, correlationId: 'crash', causationId: null, requestId: null, now: new Date() },
              appDeployStreamId(appId), deployDecider, { type: 'StartDeploymentBuild', deploymentId: res.body.deployment.deploymentId, worker: 'dead-worker' });
          }
        }
        expect((await call(svc2.baseUrl, 'GET', `/apps/${resumedId}/deploy`, undefined, user.auth)).body.status).to.equal('BUILDING');
        const s = svc2.services;
        worker = await s.bus.start(appDeployer({ eventStore: s.eventStore, appDelivery: s.appDelivery, clock: { now: s.now }, logger: s.logger }, 'restarted-worker'));
        const resumed = await waitForDeployment(svc2, user, resumedId);
        expect(resumed.status).to.equal('READY');
        expect(resumed.latest.attempts).to.equal(2);
        expect(resumed.latest.log[0]).to.match(/^attempt 2 on restarted-worker/);
        expect((await fetch(resumed.url)).status).to.equal(200);
        const abandoned = await waitForDeployment(svc2, user, abandonedId);
        expect(abandoned.status).to.equal('ERROR');
        expect(abandoned.latest.error.code).to.equal('DEPLOYMENT_ABANDONED');
        expect(abandoned.url).to.equal(null);
      } finally {
        await worker?.stop();
        await svc2.stop();
      }
    });
  });
}
