/**
 * The console's auth pages, driven in Chromium against an embedded service: registering, the CLI's
 * device login approved and denied from the page (a real `flowctl login` child process), a password
 * reset from the mailed link, an invitation accepted from its link then switched to in the header,
 * and the social sign-in landing page.
 */
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { flowctl, newConfigHome, spawnFlowctl, type FlowctlProcess } from '../cli/support.js';
import { buildConsoleOnce, keepScreenshot, launchChromium, openConsole, type WatchedPage } from '../support/console-browser.js';
import { call } from '../support/http.js';
import { mailsTo, registerUser, verifyEmailOf, type RegisteredUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { waitUntil } from '../support/wait.js';

describe('web console: auth pages (register, CLI device login, reset, invitation, social callback, switcher)', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let origin: string;
  const homes: string[] = [];
  const opened: WatchedPage[] = [];

  before(async () => {
    await buildConsoleOnce();
    svc = await startTestService('embedded', { DEVICE_POLL_INTERVAL_SECONDS: '1', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    origin = new URL(svc.baseUrl).origin;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  afterEach(() => {
    // What must never happen, on every page of every test: a request off the service, a CSP violation, a page error.
    for (const { elsewhere, problems } of opened.splice(0)) {
      expect(elsewhere, 'requests leaving the service').to.deep.equal([]);
      expect(problems, 'CSP violations and page errors').to.deep.equal([]);
    }
  });

  async function open(options: { token?: string; viewport?: { width: number; height: number } } = {}): Promise<Page> {
    const watched = await openConsole(browser, origin, options);
    opened.push(watched);
    return watched.page;
  }

  /** A link the service printed or mailed, opened on this console: its FRONTEND_URL carries the configured PORT=0. */
  const onConsole = (link: string) => {
    const url = new URL(link);
    return `${origin}${url.pathname}${url.search}`;
  };

  const storedToken = (page: Page) => page.evaluate(() => localStorage.getItem('flows.console.token'));

  async function signInOnPage(page: Page, email: string, password: string) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** `flowctl login` in its own HOME, once it shows its code and links. */
  async function startLogin(): Promise<{ login: FlowctlProcess; userCode: string; link: string; env: { url: string; configHome: string } }> {
    const configHome = newConfigHome();
    homes.push(configHome);
    const env = { url: svc.baseUrl, configHome };
    const login = spawnFlowctl(['login', '--name', 'browser test laptop'], env);
    const [, userCode] = await login.waitFor(/enter the code: ([B-Z]{4}-[B-Z]{4})/);
    const [, link] = await login.waitFor(/\(or open (\S+)\)/);
    return { login, userCode, link, env };
  }

  it('registers from /register and lands on the flows, signed in', async () => {
    const page = await open();
    await page.goto(`${origin}/sign-in`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(/\/register$/);
    const email = `reg-${Date.now()}@example.test`;
    await page.getByLabel('Name').fill('Rita Register');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await keepScreenshot(page, '10-register');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/\/flows$/);
    await page.getByRole('heading', { level: 1, name: 'Flows' }).waitFor();
    const token = await storedToken(page);
    const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${token}` });
    expect(me.status, me.text).to.equal(200);
    expect(JSON.stringify(me.body)).to.include(email);
    // The same address again: the API's code is shown.
    const again = await open();
    await again.goto(`${origin}/register`);
    await again.getByLabel('Name').fill('Someone Else');
    await again.getByLabel('Email').fill(email);
    await again.getByLabel('Password').fill('another long password');
    await again.getByRole('button', { name: 'Create account' }).click();
    expect(await again.getByRole('alert').getAttribute('data-code')).to.equal('EMAIL_TAKEN');
  });

  it('approves a flowctl device login from the link (after signing in) and by typing the code; flowctl then works', async () => {
    const user = await registerUser(svc.baseUrl);
    const { login, userCode, link, env } = await startLogin();
    // Signed out: the page sends the person to sign in, and back with the code.
    const page = await open();
    await page.goto(onConsole(link));
    await page.waitForURL(/\/sign-in\?next=/);
    await signInOnPage(page, user.email, user.password);
    await page.waitForURL((url) => url.pathname === '/cli/device' && url.searchParams.get('user_code') === userCode);
    expect(await page.getByLabel('Code').inputValue()).to.equal(userCode);
    await keepScreenshot(page, '11-device-code');
    await page.getByRole('button', { name: 'Approve' }).click();
    const status = page.getByRole('status');
    await status.filter({ hasText: 'Approved' }).waitFor();
    expect(await status.textContent()).to.include('browser test laptop').and.include('return to your terminal');
    await keepScreenshot(page, '12-device-approved');
    const done = await login.exited;
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stdout).to.include(`as ${user.email}`);
    const who = await flowctl(['whoami', '--json'], env);
    expect(who.code, who.stderr).to.equal(0);
    expect(JSON.parse(who.stdout)).to.include({ email: user.email, credential: 'cli_token', tokenName: 'browser test laptop' });

    // Without the query: the person types the code (lower case, no dash: the API normalizes it).
    const second = await startLogin();
    await page.goto(`${origin}/cli/device`);
    expect(await page.getByLabel('Code').inputValue()).to.equal('');
    await page.getByLabel('Code').fill('BCDF-GHJK');
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.getByRole('alert').getAttribute('data-code'), 'an unknown code').to.equal('DEVICE_CODE_NOT_FOUND');
    await page.getByLabel('Code').fill(second.userCode.replace('-', '').toLowerCase());
    await page.getByLabel('Code').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
    const secondDone = await second.login.exited;
    expect(secondDone.code, secondDone.stderr).to.equal(0);
    // The same code once more: already decided.
    await page.goto(`${origin}/cli/device?user_code=${second.userCode}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('DEVICE_CODE_ALREADY_DECIDED');
  });

  it('denies a flowctl device login: flowctl exits 3 saying so, and saves nothing', async () => {
    const user = await registerUser(svc.baseUrl);
    const { login, link, env } = await startLogin();
    const page = await open({ token: user.token });
    await page.goto(onConsole(link));
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('status').filter({ hasText: 'Denied' }).waitFor();
    await keepScreenshot(page, '13-device-denied');
    const done = await login.exited;
    expect(done.code).to.equal(3);
    expect(done.stderr).to.include('the login was denied');
    const who = await flowctl(['whoami'], env);
    expect(who.code).not.to.equal(0);
  });

  it('resets the password from the mailed link, then signs in with the new one', async () => {
    const user = await registerUser(svc.baseUrl);
    // A verified account keeps itself (an unverified one would start over as a new account).
    await verifyEmailOf(svc.baseUrl, svc.services.config.DATA_DIR, user.email, user.password);
    const page = await open();
    await page.goto(`${origin}/sign-in`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email').fill(user.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account exists' }).waitFor();
    await keepScreenshot(page, '14-forgot-password');
    // Sent after the answer: its timing must not tell whether the account exists.
    const mail = await waitUntil('the reset mail', () => mailsTo(svc.services.config.DATA_DIR, user.email).find((m) => m.subject === 'Reset your password'));
    const link = /\S+\/reset-password\?token=\S+/.exec(mail.text)?.[0];
    expect(link, 'the reset link in the mail').to.be.a('string');
    await page.goto(onConsole(link!));
    const newPassword = 'a brand new password 42';
    await page.getByLabel(/^New password\s*At least/).fill(newPassword);
    await page.getByLabel('New password again').fill(`${newPassword}!`);
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'differ' }).waitFor();
    await page.getByLabel('New password again').fill(newPassword);
    await keepScreenshot(page, '15-reset-password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.waitForURL(/\/sign-in\?reset=1$/);
    await page.getByRole('status').filter({ hasText: 'password was changed' }).waitFor();
    await signInOnPage(page, user.email, user.password);
    expect(await page.getByRole('alert').getAttribute('data-code'), 'the old password').to.equal('INVALID_CREDENTIALS');
    await signInOnPage(page, user.email, newPassword);
    await page.waitForURL(/\/flows$/);
    const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${await storedToken(page)}` });
    expect(me.body.user.id, 'the same account').to.equal(user.user.id);
    // The link works once.
    await page.goto(onConsole(link!));
    await page.getByLabel(/^New password\s*At least/).fill('yet another password');
    await page.getByLabel('New password again').fill('yet another password');
    await page.getByRole('button', { name: 'Set password' }).click();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('INVALID_RESET_TOKEN');
  });

  it('a reset of an address whose account never verified it starts over, and the sign-in page says so', async () => {
    const user = await registerUser(svc.baseUrl);
    await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email: user.email });
    const mail = await waitUntil('the reset mail', () => mailsTo(svc.services.config.DATA_DIR, user.email).find((m) => m.subject === 'Reset your password'));
    const page = await open();
    await page.goto(onConsole(/\S+\/reset-password\?token=\S+/.exec(mail.text)![0]));
    await page.getByLabel(/^New password\s*At least/).fill('started over password');
    await page.getByLabel('New password again').fill('started over password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.waitForURL(/\/sign-in\?reset=new$/);
    await page.getByRole('status').filter({ hasText: 'a new, verified account holds it now' }).waitFor();
    await signInOnPage(page, user.email, 'started over password');
    await page.waitForURL(/\/flows$/);
  });

  it('accepts an invitation from its link (signing in on the way), then the header switches to that organization', async () => {
    const owner = await registerUser(svc.baseUrl);
    const invitee = await registerUser(svc.baseUrl);
    const orgName = `Acme ${Date.now()}`;
    const org = await call(svc.baseUrl, 'POST', '/orgs', { name: orgName }, owner.auth);
    expect(org.status, org.text).to.equal(201);
    const ops = await call(svc.baseUrl, 'POST', `/orgs/${org.body.organization.id}/workspaces`, { name: 'Ops' }, owner.auth);
    expect(ops.status, ops.text).to.equal(201);
    const invited = await call(svc.baseUrl, 'POST', `/orgs/${org.body.organization.id}/invitations`, { email: invitee.email, role: 'editor' }, owner.auth);
    expect(invited.status, invited.text).to.equal(201);
    const mail = mailsTo(svc.services.config.DATA_DIR, invitee.email).find((m) => /\/invitations\//.test(m.text));
    const link = /\S+\/invitations\/\S+/.exec(mail?.text ?? '')?.[0];
    expect(link, 'the invitation link in the mail').to.be.a('string');

    const page = await open();
    await page.goto(onConsole(link!));
    await page.getByRole('link', { name: 'Sign in to accept' }).click();
    await signInOnPage(page, invitee.email, invitee.password);
    await page.waitForURL((url) => url.pathname === new URL(link!).pathname);
    const orgPicker = page.getByLabel('Organization');
    await orgPicker.locator('option', { hasText: 'Personal' }).waitFor({ state: 'attached' });
    expect(await orgPicker.locator('option').allTextContents(), 'before accepting').to.deep.equal(['Personal']);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('status').filter({ hasText: `You joined ${orgName} as editor` }).waitFor();
    await keepScreenshot(page, '16-invitation-accepted');
    // The header learns about the new organization without a reload.
    await orgPicker.locator('option', { hasText: orgName }).waitFor({ state: 'attached' });
    expect(await orgPicker.inputValue()).to.equal('');
    const before = await storedToken(page);
    await orgPicker.selectOption({ label: orgName });
    await page.waitForFunction((old) => localStorage.getItem('flows.console.token') !== old, before);
    await page.getByLabel('Workspace').waitFor();
    expect(await orgPicker.inputValue()).to.equal(org.body.organization.id);
    expect(await page.getByLabel('Workspace').locator('option:checked').textContent()).to.equal('Default');
    const active = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, { Authorization: `Bearer ${await storedToken(page)}` });
    expect(active.body.organization.id).to.equal(org.body.organization.id);
    await keepScreenshot(page, '17-switched-organization');

    // The workspace picker switches within the organization.
    const beforeWorkspace = await storedToken(page);
    await page.getByLabel('Workspace').selectOption({ label: 'Ops' });
    await page.waitForFunction((old) => localStorage.getItem('flows.console.token') !== old, beforeWorkspace);
    await page.getByLabel('Workspace').locator('option:checked', { hasText: 'Ops' }).waitFor({ state: 'attached' });
    const inOps = await call(svc.baseUrl, 'GET', '/orgs/active', undefined, { Authorization: `Bearer ${await storedToken(page)}` });
    expect(inOps.body.workspace.id).to.equal(ops.body.workspace.id);
    expect(await page.getByLabel('Workspace').inputValue()).to.equal(ops.body.workspace.id);

    // A second invitation, opened signed in: accept, then switch from the page itself.
    const beta = await call(svc.baseUrl, 'POST', '/orgs', { name: `Beta ${Date.now()}` }, owner.auth);
    await call(svc.baseUrl, 'POST', `/orgs/${beta.body.organization.id}/invitations`, { email: invitee.email, role: 'viewer' }, owner.auth);
    const betaMail = mailsTo(svc.services.config.DATA_DIR, invitee.email).filter((m) => /\/invitations\//.test(m.text)).pop();
    await page.goto(onConsole(/\S+\/invitations\/\S+/.exec(betaMail!.text)![0]));
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('button', { name: `Switch to ${beta.body.organization.name}` }).click();
    await page.waitForURL(/\/flows$/);
    await orgPicker.locator('option:checked', { hasText: beta.body.organization.name }).waitFor({ state: 'attached' });
    // Accepting twice: the API's code.
    await page.goBack();
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('INVITATION_ALREADY_USED');

    // At phone width the switcher still fits, its labels kept for screen readers.
    const phone = await open({ token: (await storedToken(page))!, viewport: { width: 375, height: 740 } });
    await phone.goto(`${origin}/flows`);
    await phone.getByLabel('Workspace').waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'horizontal overflow in px').to.be.at.most(0);
    await keepScreenshot(phone, '18-switcher-phone');
  });

  it('verifies the email from the mailed link, asking for the password', async () => {
    const user = await registerUser(svc.baseUrl);
    const mail = mailsTo(svc.services.config.DATA_DIR, user.email).find((m) => m.subject === 'Verify your email address');
    const link = /\S+\/verify-email\?token=\S+/.exec(mail?.text ?? '')?.[0];
    expect(link, 'the verification link in the mail').to.be.a('string');
    const page = await open();
    await page.goto(onConsole(link!));
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('PASSWORD_REQUIRED');
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('status').filter({ hasText: `${user.email} is verified` }).waitFor();
    await keepScreenshot(page, '19-email-verified');
    const me = await call(svc.baseUrl, 'GET', '/users/me', undefined, user.auth);
    expect(JSON.stringify(me.body)).to.include('"emailVerified":true');
    // The link works once.
    await page.reload();
    expect(await page.getByRole('alert').getAttribute('data-code')).to.equal('INVALID_VERIFICATION_TOKEN');
  });

  it('the auth pages fit a phone-width screen', async () => {
    const page = await open({ viewport: { width: 375, height: 740 } });
    for (const path of ['/sign-in', '/register', '/forgot-password', '/reset-password?token=x', '/invitations/x', '/auth/callback#error=X&message=m']) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, `horizontal overflow of ${path} in px`).to.be.at.most(0);
    }
    await page.goto(`${origin}/sign-in`);
    await keepScreenshot(page, '09-sign-in-phone');
  });

  it('the social sign-in landing page shows an error with its code, and signs in with a token', async () => {
    const user: RegisteredUser = await registerUser(svc.baseUrl);
    const page = await open();
    await page.goto(`${origin}/sign-in`);
    expect(await page.getByRole('link', { name: 'Sign in with GitHub' }).getAttribute('href')).to.equal('/api/auth/github');
    expect(await page.getByRole('link', { name: 'Sign in with Google' }).getAttribute('href')).to.equal('/api/auth/google');
    const message = 'an account has this email but has not verified it';
    await page.goto(`${origin}/auth/callback#error=ACCOUNT_EMAIL_UNVERIFIED&provider=github&message=${encodeURIComponent(message)}`);
    const alert = page.getByRole('alert');
    expect(await alert.getAttribute('data-code')).to.equal('ACCOUNT_EMAIL_UNVERIFIED');
    expect(await alert.textContent()).to.include(message);
    await page.getByRole('heading', { level: 1, name: 'Sign in with GitHub' }).waitFor();
    expect(await storedToken(page)).to.equal(null);
    await keepScreenshot(page, '19-social-error');
    await page.goto(`${origin}/auth/callback#token=${encodeURIComponent(user.token)}&expiresIn=3600&provider=github&new=false`);
    await page.waitForURL(/\/flows$/);
    expect(await storedToken(page)).to.equal(user.token);
    expect(page.url(), 'the token leaves the address bar').not.to.include('token=');
  });
});
