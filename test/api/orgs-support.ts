import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Role } from '../../domain/shared/permissions.js';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import type { TestService } from '../support/test-service.js';

/** Helpers shared by the organizations API tests. */
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function createOrg(svc: TestService, owner: RegisteredUser, name = `Org ${Math.random().toString(36).slice(2, 8)}`) {
  const res = await call(svc.baseUrl, 'POST', '/orgs', { name }, owner.auth);
  expect(res.status, res.text).to.equal(201);
  return { org: res.body.organization as { id: string; name: string }, workspace: res.body.workspace as { id: string; name: string } };
}

/** The last invitation token mailed to `email`, read from the embedded outbox. */
export function invitationTokenFor(svc: TestService, email: string): string {
  const file = join(svc.services.config.DATA_DIR, 'outbox', 'mail.jsonl');
  if (!existsSync(file)) throw new Error('no mail was sent');
  const mails = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { to: string; text: string })
    .filter((m) => m.to === email.toLowerCase());
  const last = mails.at(-1);
  if (!last) throw new Error(`no mail to ${email}`);
  const match = /\/invitations\/(\S+)/.exec(last.text);
  if (!match) throw new Error(`no invitation link in the mail to ${email}`);
  return decodeURIComponent(match[1]);
}

export async function invite(svc: TestService, inviter: RegisteredUser, orgId: string, email: string, role: Role) {
  const res = await call(svc.baseUrl, 'POST', `/orgs/${orgId}/invitations`, { email, role }, inviter.auth);
  expect(res.status, res.text).to.equal(201);
  return { invitation: res.body.invitation as { id: string; email: string; role: Role; expiresAt: string; status: string }, token: invitationTokenFor(svc, email) };
}

/** A fresh account that joined `orgId` with `role` through a real invitation. */
export async function addMember(svc: TestService, inviter: RegisteredUser, orgId: string, role: Role) {
  const user = await registerUser(svc.baseUrl);
  const { token } = await invite(svc, inviter, orgId, user.email, role);
  const res = await call(svc.baseUrl, 'POST', `/invitations/${token}/accept`, undefined, user.auth);
  expect(res.status, res.text).to.equal(200);
  return user;
}

export function expectError(res: { status: number; body: any; text: string }, status: number, code?: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body?.success, res.text).to.equal(false);
  if (code) expect(res.body.error.code, res.text).to.equal(code);
}

export const fields = (res: { body: any }) => (res.body?.error?.details?.fields ?? []).map((f: { field: string }) => f.field);
