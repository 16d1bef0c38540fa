import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { FORM_APP, changeFiles, greeterFlow, seedApp, waitForDeployment } from '../api/apps-deploy-support.js';

/**
 * A deployed app in a real browser (Debian's Chromium through playwright-core): its form calls the
 * linked flow (offline provider) through the generated app-client.js; the page is sandboxed (no
 * cookie or storage of the service's origin); the preview dies on DELETE, the public URL on withdraw.
 * Embedded mode only: the browser sees HTTP, which is the same on both configurations (the API
 * tests run both).
 */
describe('apps in a browser (embedded)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let owner: RegisteredUser;
  let browser: Browser;
  let flowId: string;

  before(async () => {
    svc = await startTestService('embedded');
    owner = await registerUser(svc.baseUrl);
    flowId = await greeterFlow(svc, owner);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it("opens the deployed app's public URL, submits its form and shows the flow's answer; 404 after withdraw", async () => {
    const appId = await seedApp(svc, owner, FORM_APP, flowId);
    expect((await call(svc.baseUrl, 'POST', `/apps/${appId}/deploy`, {}, owner.auth)).status).to.equal(202);
    const deployed = await waitForDeployment(svc, owner, appId);
    expect(deployed.status).to.equal('READY');

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const response = await page.goto(deployed.url);
    expect(response!.status()).to.equal(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).to.contain("script-src 'self'").and.to.contain('sandbox allow-scripts');
    expect(headers['x-content-type-options']).to.equal('nosniff');
    expect(headers['referrer-policy']).to.equal('no-referrer');

    await page.waitForFunction(() => document.getElementById('badge')?.textContent === '[bundled]');
    // The browser check of the contract stops an empty name before any request.
    await page.click('#go');
    await page.waitForSelector('#out[data-state="error"]');
    expect(await page.textContent('#out')).to.contain('who');
    await page.fill('#who', 'browser');
    await page.click('#go');
    await page.waitForSelector('#out[data-state="done"]');
    expect(await page.textContent('#out')).to.equal('hi browser');

    // Sandboxed: an opaque origin, so nothing of the service's origin is reachable.
    // A string, not a function: tsx would wrap named functions with a helper the page does not have.
    const reach = await page.evaluate(`(() => {
      const tryIt = (f) => { try { f(); return 'allowed'; } catch (e) { return e.name; } };
      return { cookie: tryIt(() => document.cookie), storage: tryIt(() => window.localStorage.length), origin: window.origin };
    })()`);
    expect(reach).to.deep.equal({ cookie: 'SecurityError', storage: 'SecurityError', origin: 'null' });
    expect(errors).to.deep.equal([]);

    expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/deploy`, undefined, owner.auth)).status).to.equal(200);
    expect((await page.reload())!.status()).to.equal(404);
    await page.close();
  });

  it('shows the preview, then a build error with file and line, and the preview is dead after DELETE', async () => {
    const appId = await seedApp(svc, owner, FORM_APP, flowId);
    const created = await call(svc.baseUrl, 'POST', `/apps/${appId}/preview`, undefined, owner.auth);
    expect(created.status, created.text).to.equal(201);
    const page = await browser.newPage();
    expect((await page.goto(created.body.url))!.status()).to.equal(200);
    await page.fill('#who', 'preview');
    await page.click('#go');
    await page.waitForSelector('#out[data-state="done"]');
    expect(await page.textContent('#out')).to.equal('hi preview');

    await changeFiles(svc, owner, appId, [{ path: 'src/label.ts', content: 'export function label(s: string): string {\n  return s +;\n}\n' }]);
    const broken = await page.reload();
    expect(broken!.status()).to.equal(500);
    expect(broken!.headers()['content-security-policy']).to.contain("default-src 'self'");
    expect(await page.textContent('body')).to.contain('src/label.ts:2:');

    expect((await call(svc.baseUrl, 'DELETE', `/apps/${appId}/preview`, undefined, owner.auth)).status).to.equal(200);
    expect((await page.reload())!.status()).to.equal(404);
    await page.close();
  });
});
