import { hostname } from 'node:os';
import type { Command } from 'commander';
import { ApiClient, ApiError, isTransient, sleep } from '../lib/api.js';
import { credentialsPath, forgetLogin, saveLogin, savedLoginFor } from '../lib/config.js';
import { contextOf } from '../lib/context.js';
import { CliError, EXIT } from '../lib/errors.js';

const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The user a token belongs to: the verify route, and the profile for the email. */
async function describeToken(api: ApiClient) {
  const verify = await api.data(api.client.GET('/cli/tokens/verify'));
  let user: { id: string; email?: string; name?: string } | null = null;
  try {
    const me: any = await api.data(api.client.GET('/users/me'));
    user = me.user ?? me;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status === 401) throw err;
  }
  return {
    userId: verify.userId as string,
    email: user?.email ?? null,
    name: user?.name ?? null,
    credential: verify.credential as string,
    tokenId: (verify.tokenId as string | undefined) ?? null,
    tokenName: (verify.name as string | null | undefined) ?? null,
    expiresAt: (verify.expiresAt as string | undefined) ?? null,
  };
}

export function registerAuthCommands(program: Command) {
  program
    .command('login')
    .description('sign in with the device flow: open the URL shown, enter the code, and flowctl receives a token')
    .option('--name <clientName>', 'how this device shows up in your CLI tokens', `flowctl on ${hostname()}`)
    .action(async (options: { name: string }, command: Command) => {
      const { url, out, json } = contextOf(command);
      const api = new ApiClient(url, null);
      const code: DeviceCode = await api.data(api.anonymous.POST('/cli/device/code', { body: { clientName: options.name.slice(0, 100), client_id: 'flowctl' } }));
      const expiresAt = Date.now() + code.expires_in * 1000;
      if (json) {
        out.line({ event: 'device_code', user_code: code.user_code, verification_uri: code.verification_uri, verification_uri_complete: code.verification_uri_complete, expires_in: code.expires_in, interval: code.interval }, () => '');
      } else {
        process.stdout.write(
          [
            `To sign in, open ${code.verification_uri}`,
            `and enter the code: ${code.user_code}`,
            `(or open ${code.verification_uri_complete})`,
            `Waiting for approval (the code expires in ${Math.round(code.expires_in / 60)} min)…`,
            '',
          ].join('\n'),
        );
      }
      let interval = Math.max(1, code.interval);
      let token: string | null = null;
      while (!token) {
        await sleep(interval * 1000);
        if (Date.now() > expiresAt + 5000) throw new CliError('the code expired before it was approved: run flowctl login again', EXIT.AUTH, 'expired_token');
        try {
          const answer = await api.data(api.anonymous.POST('/cli/device/token', { body: { device_code: code.device_code, grant_type: DEVICE_GRANT_TYPE, client_id: 'flowctl' } }));
          token = answer.access_token as string;
        } catch (err) {
          // The service may name the interval it now expects (error.details.interval): never poll faster than that.
          const announced = err instanceof ApiError ? Number((err.details as { interval?: unknown } | undefined)?.interval) : NaN;
          if (err instanceof ApiError && err.code === 'authorization_pending') {
            if (Number.isFinite(announced)) interval = Math.max(interval, announced);
            continue;
          }
          if (err instanceof ApiError && err.code === 'slow_down') {
            interval = Math.max(interval + 5, Number.isFinite(announced) ? announced : 0); // RFC 8628 §3.5
            continue;
          }
          if (err instanceof ApiError && err.code === 'access_denied') throw new CliError('the login was denied', EXIT.AUTH, 'access_denied');
          if (err instanceof ApiError && err.code === 'expired_token') throw new CliError('the code expired before it was approved: run flowctl login again', EXIT.AUTH, 'expired_token');
          if (err instanceof ApiError && err.status === 429) {
            interval = Math.max(interval, err.retryAfterSeconds ?? interval);
            continue;
          }
          if (isTransient(err)) continue; // the service restarts or the network blinks: keep polling until the code expires
          throw err;
        }
      }
      const who = await describeToken(new ApiClient(url, token));
      saveLogin(url, { token, tokenId: who.tokenId, userId: who.userId, email: who.email, savedAt: new Date().toISOString() });
      out.result({ event: 'signed_in', url, userId: who.userId, email: who.email, tokenId: who.tokenId, expiresAt: who.expiresAt, credentials: credentialsPath() }, () => [
        `Signed in to ${url} as ${who.email ?? who.userId}.`,
        `Token saved in ${credentialsPath()}${who.expiresAt ? ` (expires ${who.expiresAt.slice(0, 10)})` : ''}.`,
      ]);
    });

  program
    .command('logout')
    .description('revoke this machine\'s token on the service and forget it')
    .action(async (_options: unknown, command: Command) => {
      const { url, api, out } = contextOf(command);
      const saved = savedLoginFor(url);
      if (!saved) {
        out.result({ url, signedOut: false, reason: 'not signed in' }, () => `Not signed in to ${url}.`);
        return;
      }
      let revoked = false;
      let warning: string | null = null;
      if (saved.tokenId) {
        try {
          await api.data(api.client.DELETE('/cli/tokens/{tokenId}', { params: { path: { tokenId: saved.tokenId } } }));
          revoked = true;
        } catch (err) {
          // A token that no longer works is as good as revoked; anything else is worth a warning.
          if (err instanceof ApiError && (err.status === 401 || err.status === 404)) revoked = true;
          else warning = `could not revoke the token on the service (${(err as Error).message}); it stays valid until it expires`;
        }
      }
      forgetLogin(url);
      if (warning) out.note(`warning: ${warning}`);
      out.result({ url, signedOut: true, revoked }, () => `Signed out of ${url}${revoked ? ' (token revoked)' : ''}.`);
    });

  program
    .command('whoami')
    .description('show who the saved token belongs to')
    .action(async (_options: unknown, command: Command) => {
      const { url, api, out } = contextOf(command);
      const who = await describeToken(api);
      out.result({ url, ...who }, () => [
        `${who.email ?? who.userId}${who.name ? ` (${who.name})` : ''}`,
        `user:       ${who.userId}`,
        `service:    ${url}`,
        `credential: ${who.credential}${who.tokenId ? ` ${who.tokenId}` : ''}${who.tokenName ? ` "${who.tokenName}"` : ''}${who.expiresAt ? `, expires ${who.expiresAt}` : ''}`,
      ]);
    });
}
