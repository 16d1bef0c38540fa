/**
 * The web console served at the service's root (issue 35): on the embedded default it paints in
 * ≤ 1 s, sends no request off the service, breaks no CSP rule, opens the pages the API's links lead
 * to, signs in with a password, and fits a phone-width screen.
 */
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { registerUser } from '../support/identity.js';
import { buildConsoleOnce, firstContentfulPaint, keepScreenshot, launchChromium, openConsole } from '../support/console-browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('web console: the shell (served at /, CSP, first paint, sign in)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let origin: string;
  before(async () => {
    await buildConsoleOnce();
    svc = await startTestService('embedded');
    origin = new URL(svc.baseUrl).origin;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('answers / with the console under a strict CSP, and the API keeps its JSON 404s', async () => {
    const root = await fetch(`${origin}/`);
    expect(root.status).to.equal(200);
    expect(root.headers.get('content-type')).to.match(/^text\/html/);
    const csp = root.headers.get('content-security-policy') ?? '';
    expect(csp).to.contain("script-src 'self'").and.to.contain("connect-src 'self'").and.not.to.contain('unsafe-inline');
    const html = await root.text();
    const asset = /\/assets\/(main-[A-Z0-9]+\.js)/.exec(html)?.[1];
    expect(asset, 'the page names its hashed bundle').to.be.a('string');
    const js = await fetch(`${origin}/assets/${asset}`);
    expect(js.status).to.equal(200);
    expect(js.headers.get('cache-control')).to.contain('immutable');
    expect((await fetch(`${origin}/assets/main-NOSUCH.js`)).status).to.equal(404);
    const api = await fetch(`${origin}/api/no-such-thing`);
    expect(api.status).to.equal(404);
    expect(((await api.json()) as { error: { code: string } }).error.code).to.equal('ROUTE_NOT_FOUND');
  });

  it('paints in ≤ 1 s, redirects to sign in, signs in with a password and lands on the flows', async () => {
    const user = await registerUser(svc.baseUrl);
    const { page, elsewhere, problems } = await openConsole(browser, origin);
    await page.goto(`${origin}/`);
    await page.waitForURL(/\/sign-in/);
    const fcp = await firstContentfulPaint(page);
    console.log(`      first contentful paint: ${fcp?.toFixed(0)} ms (aim ≤ 1000 ms)`);
    expect(fcp).to.be.a('number').and.to.be.at.most(1000);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('INVALID_CREDENTIALS');
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/flows$/);
    await page.getByRole('heading', { level: 1, name: 'Flows' }).waitFor();
    await keepScreenshot(page, '00-signed-in');
    expect(elsewhere, 'requests leaving the service').to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it('fits a phone-width screen: nothing scrolls sideways', async () => {
    const user = await registerUser(svc.baseUrl);
    const { page, problems } = await openConsole(browser, origin, { token: user.token, viewport: { width: 375, height: 740 } });
    await page.goto(`${origin}/flows`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'horizontal overflow in px').to.be.at.most(0);
    await keepScreenshot(page, '00-phone-width');
    expect(problems).to.deep.equal([]);
  });
});
