/**
 * The console is usable without a mouse and by assistive technology (issue 35): axe-core finds no
 * WCAG 2.1 A/AA violation on each page, and the keyboard alone signs in (Tab order: skip link,
 * fields, button) and reaches every main page through the header's navigation.
 */
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { accessibilityViolations, buildConsoleOnce, launchChromium, openConsole } from '../support/console-browser.js';
import { startTestService, type TestService } from '../support/test-service.js';

describe('web console: accessibility (axe-core, keyboard only)', function () {
  this.timeout(180_000);
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

  it('has no WCAG 2.1 A/AA violation on its pages', async () => {
    const user = await registerUser(svc.baseUrl);
    const flow = await call(svc.baseUrl, 'POST', '/flows', { name: 'Accessible flow' }, user.auth);
    expect(flow.status).to.equal(201);
    const signedOut = await openConsole(browser, origin);
    const signedIn = await openConsole(browser, origin, { token: user.token });
    const pages: Array<[typeof signedIn, string]> = [
      [signedOut, '/sign-in'],
      [signedOut, '/register'],
      [signedOut, '/forgot-password'],
      [signedIn, '/cli/device?user_code=ABCD-EFGH'],
      [signedIn, '/flows'],
      [signedIn, `/flows/${flow.body.flow.id}`],
      [signedIn, '/runs'],
      [signedIn, '/workflows'],
      [signedIn, '/agents'],
    ];
    const found: string[] = [];
    for (const [{ page }, path] of pages) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForLoadState('networkidle');
      for (const v of await accessibilityViolations(page)) found.push(`${path}: ${v.id} (${v.impact}) ${v.help}: ${v.targets.slice(0, 3).join(', ')}`);
    }
    expect(found, found.join('\n')).to.deep.equal([]);
    expect([...signedOut.problems, ...signedIn.problems]).to.deep.equal([]);
  });

  it('signs in and reaches every main page with the keyboard alone', async () => {
    const user = await registerUser(svc.baseUrl);
    const { page, problems } = await openConsole(browser, origin);
    await page.goto(`${origin}/sign-in`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    const focusedName = () => page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el ? `${el.tagName.toLowerCase()}:${el.getAttribute('type') ?? ''}:${(el.textContent ?? '').trim()}` : '';
    });
    await page.keyboard.press('Tab');
    expect(await focusedName()).to.match(/^a::Skip to content/);
    // Tab on to the email field, whatever links the header holds before it.
    for (let i = 0; i < 10 && !(await focusedName()).startsWith('input:email'); i++) await page.keyboard.press('Tab');
    expect(await focusedName()).to.match(/^input:email/);
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    expect(await focusedName()).to.match(/^input:password/);
    await page.keyboard.type(user.password);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/flows$/);
    for (const label of ['Runs', 'Workflows', 'Agents', 'Flows']) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: new RegExp(label) }).waitFor();
    }
    expect(problems).to.deep.equal([]);
  });
});
