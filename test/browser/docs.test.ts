/**
 * The interactive reference at /api/docs (Swagger UI from swagger-ui-dist, self-hosted) in Chromium:
 * it loads with no request leaving the service, lists the operations of /api/openapi.json, and
 * "Execute" on an operation calls the running service and shows its answer: GET /health without
 * credentials, then GET /users/me after "Authorize" with a bearer token.
 */
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { registerUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';

const CHROMIUM = '/usr/bin/chromium';

describe('API reference page in a browser (/api/docs)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  before(async () => {
    svc = await startTestService('embedded');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('renders the document and "Execute" calls the running service, anonymously and after Authorize', async () => {
    const origin = new URL(svc.baseUrl).origin;
    const user = await registerUser(svc.baseUrl);
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const calls: string[] = [];
    page.on('request', (req) => {
      const url = new URL(req.url());
      if (url.origin !== origin && url.protocol !== 'data:') elsewhere.push(req.url());
      if (url.origin === origin && !url.pathname.startsWith('/api/docs') && url.pathname !== '/api/openapi.json') calls.push(`${req.method()} ${url.pathname}`);
    });
    await page.goto(`${origin}/api/docs`);
    await page.waitForSelector('.opblock', { timeout: 60_000 });
    // The document's tags and operations are what the page shows (Swagger UI renders them as they scroll into view).
    const doc = await (await fetch(`${svc.baseUrl}/openapi.json`)).json();
    expect(await page.locator('.info .title').innerText()).to.contain(doc.info.title);
    expect(await page.locator('.opblock-tag').count()).to.be.greaterThan(0);

    // GET /health, anonymously.
    const health = page.locator('.opblock-get:has(.opblock-summary-path[data-path="/health"])').first();
    await health.locator('.opblock-summary').click();
    await health.locator('button.execute').click();
    await health.locator('.live-responses-table .response .response-col_status').first().waitFor({ timeout: 30_000 });
    expect((await health.locator('.live-responses-table .response .response-col_status').first().innerText()).trim()).to.equal('200');
    expect(await health.locator('.live-responses-table .response .response-col_description').first().innerText()).to.contain('"ports"');

    // Authorize with a bearer token, then GET /users/me answers this user.
    await page.locator('.auth-wrapper .authorize').first().click();
    const bearer = page.locator('.auth-container:has-text("bearer")').first();
    await bearer.locator('input').first().fill(user.token);
    await bearer.locator('button.authorize').click();
    await page.locator('.btn-done, button.close-modal').first().click();
    // Deep link to the operation (the authorization is kept across the reload: persistAuthorization).
    await page.goto('about:blank');
    await page.goto(`${origin}/api/docs#/Profile/getMyProfile`);
    const me = page.locator('#operations-Profile-getMyProfile');
    await me.locator('button.execute').waitFor({ timeout: 60_000 });
    await me.locator('button.execute').click();
    await me.locator('.live-responses-table .response .response-col_status').first().waitFor({ timeout: 30_000 });
    expect((await me.locator('.live-responses-table .response .response-col_status').first().innerText()).trim()).to.equal('200');
    expect(await me.locator('.live-responses-table .response .response-col_description').first().innerText()).to.contain(user.email);

    expect(calls).to.include.members(['GET /api/health', 'GET /api/users/me']);
    expect(elsewhere, 'requests leaving the service').to.deep.equal([]);
  });
});
