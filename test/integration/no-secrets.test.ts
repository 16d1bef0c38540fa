import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { waitUntil } from '../support/wait.js';

/**
 * Runs every secret-bearing operation of the identity area, then scans the whole event log and
 * every log line (at debug level) for each secret in clear: passwords, JWTs, API keys, CLI
 * tokens, device codes, reset and invitation tokens, provider credentials, node secrets (webhook
 * header values, secret variables).
 */
describe('no secret in clear in the event store or the logs', function () {
  this.timeout(60_000);
  const logLines: string[] = [];
  let svc: TestService;
  before(async () => {
    svc = await startTestService('embedded', { LOG_LEVEL: 'debug', RATE_LIMIT_AUTH_PER_MINUTE: '1000' }, { logSink: { write: (line) => void logLines.push(line) } });
  });
  after(async () => svc?.stop());

  const outbox = () =>
    readFileSync(join(svc.services.config.DATA_DIR, 'outbox', 'mail.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { to: string; subject: string; text: string });

  it('after a full run of the area', async () => {
    const secrets: Record<string, string> = {};
    const email = `secret-${Date.now()}@example.com`;
    secrets.password = 'first password 1234';
    const reg = await call(svc.baseUrl, 'POST', '/auth/register', { email, password: secrets.password, name: 'Secret Keeper' });
    expect(reg.status, reg.text).to.equal(201);
    secrets.registerToken = reg.body.token;
    const verificationMail = outbox().find((m) => m.to === email && m.subject === 'Verify your email address')!;
    secrets.verificationToken = /token=([^\s&]+)/.exec(verificationMail.text)![1];
    secrets.verificationSecret = decodeURIComponent(secrets.verificationToken).split('.').pop()!;
    const verified = await call(svc.baseUrl, 'POST', '/auth/verify-email', { token: decodeURIComponent(secrets.verificationToken), password: secrets.password });
    expect(verified.status, verified.text).to.equal(200);
    const login = await call(svc.baseUrl, 'POST', '/auth/login', { email, password: secrets.password });
    expect(login.status, login.text).to.equal(200);
    secrets.loginToken = login.body.token;
    const auth = { Authorization: `Bearer ${secrets.loginToken}` };

    expect((await call(svc.baseUrl, 'POST', '/auth/forgot-password', { email })).status).to.equal(200);
    // The reset mail is sent after the answer (its timing must not tell whether the account exists).
    const resetMail = await waitUntil('the reset mail', () => outbox().find((m) => m.to === email && m.subject === 'Reset your password'));
    secrets.resetToken = /token=([^\s&]+)/.exec(resetMail.text)![1];
    secrets.newPassword = 'second password 5678';
    const reset = await call(svc.baseUrl, 'POST', '/auth/reset-password', { token: decodeURIComponent(secrets.resetToken), password: secrets.newPassword });
    expect(reset.status, reset.text).to.equal(200);
    const relogin = await call(svc.baseUrl, 'POST', '/auth/login', { email, password: secrets.newPassword });
    const auth2 = { Authorization: `Bearer ${relogin.body.token}` };
    secrets.reloginToken = relogin.body.token;

    const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'scan' }, auth2);
    expect(key.status, key.text).to.equal(201);
    secrets.apiKey = key.body.key;
    secrets.apiKeySecret = secrets.apiKey.split('.').pop()!;
    expect((await call(svc.baseUrl, 'GET', '/users/me', undefined, { Authorization: `Bearer ${secrets.apiKey}` })).status).to.equal(200);

    const cli = await call(svc.baseUrl, 'POST', '/cli/tokens', { name: 'scan' }, auth2);
    expect(cli.status, cli.text).to.equal(201);
    secrets.cliToken = cli.body.token;
    secrets.cliTokenSecret = secrets.cliToken.split('.').pop()!;
    const device = await call(svc.baseUrl, 'POST', '/cli/device/code', {});
    expect(device.status, device.text).to.equal(200);
    secrets.deviceCode = device.body.device_code;
    secrets.deviceSecret = secrets.deviceCode.split('.').pop()!;
    expect((await call(svc.baseUrl, 'POST', '/cli/device/approve', { user_code: device.body.user_code }, auth2)).status).to.equal(200);
    const polled = await call(svc.baseUrl, 'POST', '/cli/device/token', { device_code: secrets.deviceCode, grant_type: 'urn:ietf:params:oauth:grant-type:device_code' });
    expect(polled.status, polled.text).to.equal(200);
    secrets.deviceAccessToken = polled.body.access_token;

    const org = await call(svc.baseUrl, 'POST', '/orgs', { name: 'Secret Org' }, auth2);
    expect(org.status, org.text).to.equal(201);
    const orgId = org.body.organization.id;
    secrets.providerKey = 'sk-live-0123456789abcdefSECRET';
    const creds = await call(svc.baseUrl, 'PUT', `/orgs/${orgId}/llm-credentials`, { provider: 'openai', apiKey: secrets.providerKey }, auth2);
    expect(creds.status, creds.text).to.equal(200);
    const invite = await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email: 'invitee@example.com', role: 'editor' }, auth2);
    expect(invite.status, invite.text).to.equal(201);
    const invitationMail = outbox().find((m) => m.to === 'invitee@example.com')!;
    secrets.invitationToken = /invitations\/([^\s]+)/.exec(invitationMail.text)![1];
    secrets.invitationSecret = decodeURIComponent(secrets.invitationToken).split('.').pop()!;

    // Node secrets: a webhook node's header values and its {"$secret"} variables are sealed before any event.
    secrets.webhookToken = `whk_${randomBytes(16).toString('hex')}`;
    secrets.secretVariable = `var_${randomBytes(16).toString('hex')}`;
    const flow = await call(svc.baseUrl, 'POST', '/flows', { name: 'secrets' }, auth2);
    expect(flow.status, flow.text).to.equal(201);
    const hook = await call(svc.baseUrl, 'POST', `/flows/${flow.body.flow.id}/nodes`, {
      type: 'custom',
      position: { x: 0, y: 0 },
      data: { nodeType: 'webhook', webhookConfig: { url: 'https://hooks.example.com/x', headers: { Authorization: `Bearer ${secrets.webhookToken}` } }, variables: { key: { $secret: secrets.secretVariable } } },
    }, auth2);
    expect(hook.status, hook.text).to.equal(201);

    const events = JSON.stringify(await svc.services.eventStore.readAll({ maxCount: 100_000 }));
    const logs = logLines.join('\n');
    expect(logLines.length, 'the run logged something at debug level').to.be.greaterThan(10);
    for (const [name, value] of Object.entries(secrets)) {
      expect(value, name).to.be.a('string').with.length.greaterThan(7);
      expect(events.includes(value), `${name} appears in the event store`).to.equal(false);
      expect(logs.includes(value), `${name} appears in the logs`).to.equal(false);
    }
  });
});
