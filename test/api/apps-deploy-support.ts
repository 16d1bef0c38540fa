import { randomUUID } from 'node:crypto';
import { executeAppCommand, hashFiles } from '../../commands/apps.js';
import type { CommandContext } from '../../commands/handle.js';
import { call } from '../support/http.js';
import type { RegisteredUser } from '../support/identity.js';
import type { TestService } from '../support/test-service.js';
import { flowClient } from './flows-support.js';

/** Fixtures of the app-delivery tests: a flow answering `hi {{inputs.who}}` (offline provider) and an app whose form calls it. */
export const CONTRACT = {
  input: { type: 'object', properties: { who: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['who'], additionalProperties: false },
  output: { type: 'string' },
};

export const FORM_APP = [
  {
    path: 'index.html',
    content: '<!doctype html><html><head><meta charset="utf-8"><title>Greeter</title><link rel="stylesheet" href="style.css"></head><body>' +
      '<form data-app-form><input name="who" id="who"><button id="go" type="submit">Go</button></form><pre id="out" data-app-output></pre>' +
      '<p id="badge"></p><script src="app-client.js"></script><script src="src/main.tsx"></script></body></html>',
  },
  { path: 'style.css', content: 'body { font-family: sans-serif; }' },
  { path: 'src/main.tsx', content: 'import { label } from "./label";\nconst badge = document.getElementById("badge");\nif (badge) badge.textContent = label("bundled");\n' },
  { path: 'src/label.ts', content: 'export function label(s: string): string {\n  return `[${s}]`;\n}\n' },
];

/** The app is written through the apps context's own command handler (what PUT /apps/{id}/files runs). */
export async function seedApp(svc: TestService, owner: RegisteredUser, files: Array<{ path: string; content: string; encoding?: 'utf8' | 'base64' }>, flowId: string | null) {
  const appId = randomUUID();
  const tenant = { userId: owner.user.id, orgId: null, workspaceId: null };
  const context = (): CommandContext => ({ actorId: owner.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() });
  const store = svc.services.eventStore;
  await executeAppCommand(store, context(), { type: 'CreateApp', appId, tenant, by: owner.user.id, name: 'Greeter', description: '', contract: CONTRACT });
  await executeAppCommand(store, context(), { type: 'ChangeAppFiles', appId, tenant, by: owner.user.id, put: hashFiles(files), delete: [], source: 'api' });
  if (flowId) await executeAppCommand(store, context(), { type: 'LinkAppFlow', appId, tenant, by: owner.user.id, flowId });
  return appId;
}

export async function changeFiles(svc: TestService, owner: RegisteredUser, appId: string, files: Array<{ path: string; content: string }>, remove: string[] = []) {
  const tenant = { userId: owner.user.id, orgId: null, workspaceId: null };
  await executeAppCommand(svc.services.eventStore, { actorId: owner.user.id, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() }, {
    type: 'ChangeAppFiles', appId, tenant, by: owner.user.id, put: hashFiles(files), delete: remove, source: 'api',
  });
}

export async function greeterFlow(svc: TestService, owner: RegisteredUser): Promise<string> {
  const client = flowClient(() => svc);
  const flowId = await client.newFlow(owner);
  await client.addNode(owner, flowId, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'm', prompt: 'hi {{inputs.who}}' } });
  return flowId;
}

/** Polls GET /apps/{id}/deploy until the latest deployment leaves QUEUED/BUILDING. */
export async function waitForDeployment(svc: TestService, owner: RegisteredUser, appId: string, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await call(svc.baseUrl, 'GET', `/apps/${appId}/deploy`, undefined, owner.auth);
    if (res.status !== 200) throw new Error(`GET deploy answered ${res.status}: ${res.text}`);
    if (!['QUEUED', 'BUILDING'].includes(res.body.status)) return res.body;
    if (Date.now() > until) throw new Error(`deployment still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The service's origin (baseUrl without /api). */
export const originOf = (svc: TestService) => svc.baseUrl.replace(/\/api$/, '');
