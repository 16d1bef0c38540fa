/**
 * The soak's workload: one "actor" per concurrent loop, each a user of its own with its own flow,
 * collection and messaging pair, so that "the last acknowledged write" of each is well defined.
 * Every operation records what the service acknowledged; `verify` (verify.ts) reads it all back.
 */
import { randomBytes } from 'node:crypto';
import { call } from '../support/http.js';
import { login, registerUser, type RegisteredUser } from '../support/identity.js';
import { EVERYTHING_JS } from '../support/mcp-servers.js';
import { callEchoAsUser, type SoakMcp } from './mcp-calls.js';

export type OpKind = 'edit_flow' | 'sync_run' | 'async_run' | 'send_message' | 'mcp_call' | 'doc_write' | 'doc_search' | 'memory_save' | 'login';

/** Relative frequency of each operation in the mix (a realistic tilt to reads and runs). */
export const WEIGHTS: Record<OpKind, number> = {
  edit_flow: 2,
  sync_run: 4,
  async_run: 3,
  send_message: 2,
  mcp_call: 2,
  doc_write: 4,
  doc_search: 4,
  memory_save: 2,
  login: 1,
};

export interface Acknowledged {
  /** flowId → the number of the last acknowledged edit (the flow's name ends in ` v<n>`). */
  flowEdits: Map<string, number>;
  /** async runs answered 202: processId → owner's auth. */
  asyncRuns: Array<{ processId: string; auth: Record<string, string> }>;
  /** documents acknowledged 201: collection/id → document. */
  documents: Array<{ auth: Record<string, string>; collection: string; id: string; document: Record<string, unknown> }>;
  memories: Array<{ auth: Record<string, string>; id: string }>;
  /** messages sent per target session (each must become one webhook delivery). */
  messagesTo: Map<string, { auth: Record<string, string>; count: number }>;
}

export interface Actor {
  user: RegisteredUser;
  flowId: string;
  collection: string;
  sender: { id: string; address: string };
  target: { id: string; address: string };
  /** Edits attempted (acknowledged or not). */
  edits: number;
}

export interface OpOutcome {
  kind: OpKind;
  ms: number;
  ok: boolean;
  detail?: string;
}

/** Deterministic PRNG (mulberry32): the seed printed by the soak replays the same choices. */
export function prng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick(rand: () => number): OpKind {
  const entries = Object.entries(WEIGHTS) as Array<[OpKind, number]>;
  let r = rand() * entries.reduce((n, [, w]) => n + w, 0);
  for (const [kind, weight] of entries) {
    r -= weight;
    if (r < 0) return kind;
  }
  return entries[0][0];
}

const flowBody = (name: string, step: number) => ({
  name,
  nodes: [
    { id: 'n0', type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'transform', template: `step ${step} on {{inputs.topic}}` } },
    { id: 'n1', type: 'custom', position: { x: 200, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'summarize: {{previous}}' } },
  ],
  edges: [{ id: 'e0', source: 'n0', target: 'n1' }],
});

function must(res: { status: number; text: string }, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what} answered ${res.status} (expected ${status}): ${res.text.slice(0, 300)}`);
}

export async function setUpActor(baseUrl: string, index: number, webhookUrl: string, webhookSecret: string): Promise<Actor> {
  const user = await registerUser(baseUrl);
  const as = (method: string, path: string, body?: unknown) => call(baseUrl, method, path, body, user.auth);
  const flow = await as('POST', '/flows', { name: `soak ${index}` });
  must(flow, 201, 'POST /flows');
  const flowId = flow.body.flow.id as string;
  must(await as('PUT', `/flows/${flowId}`, flowBody(`soak ${index} v0`, 0)), 200, 'PUT /flows/{id}');
  const collection = `soak_${index}`;
  must(await as('POST', '/db/collections', { name: collection }), 201, 'POST /db/collections');
  const sessions: Array<{ id: string; address: string }> = [];
  for (const role of ['sender', 'target']) {
    const res = await as('POST', '/messaging/sessions', { name: `soak-${index}-${role}-${randomBytes(3).toString('hex')}` });
    must(res, 201, 'POST /messaging/sessions');
    sessions.push({ id: res.body.session.id, address: res.body.session.address });
  }
  must(await as('POST', `/messaging/sessions/${sessions[1].id}/webhook`, { url: webhookUrl, events: ['message'], secret: webhookSecret }), 200, 'POST …/webhook');
  return { user, flowId, collection, sender: sessions[0], target: sessions[1], edits: 0 };
}

/** One MCP server (server-everything over stdio) shared by all actors' calls, owned by the first. */
export async function setUpMcp(baseUrl: string, owner: RegisteredUser): Promise<string> {
  const created = await call(baseUrl, 'POST', '/mcp/servers', { name: 'soak everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING_JS, 'stdio'] }, owner.auth);
  must(created, 201, 'POST /mcp/servers');
  const id = created.body.server.id as string;
  const connected = await call(baseUrl, 'POST', `/mcp/servers/${id}/connect`, undefined, owner.auth);
  must(connected, 200, 'POST /mcp/servers/{id}/connect');
  // As a user would: a lost connection comes back by itself.
  must(await call(baseUrl, 'POST', `/mcp/servers/${id}/auto-reconnect/enable`, undefined, owner.auth), 200, 'POST …/auto-reconnect/enable');
  return id;
}

export async function runOp(kind: OpKind, baseUrl: string, actor: Actor, mcp: SoakMcp, acked: Acknowledged, rand: () => number): Promise<void> {
  const auth = actor.user.auth;
  const as = (method: string, path: string, body?: unknown, who: Record<string, string> = auth) => call(baseUrl, method, path, body, who);
  switch (kind) {
    case 'edit_flow': {
      const edit = ++actor.edits;
      must(await as('PUT', `/flows/${actor.flowId}`, flowBody(`soak ${actor.flowId.slice(0, 6)} v${edit}`, edit)), 200, 'PUT /flows/{id}');
      acked.flowEdits.set(actor.flowId, Math.max(edit, acked.flowEdits.get(actor.flowId) ?? 0));
      return;
    }
    case 'sync_run': {
      const res = await as('POST', `/flows/${actor.flowId}/run`, { inputs: { topic: 'soak' } });
      must(res, 200, 'POST /flows/{id}/run');
      if (res.body.status !== 'completed') throw new Error(`sync run ended ${res.body.status}`);
      return;
    }
    case 'async_run': {
      const res = await as('POST', `/flows/${actor.flowId}/run`, { inputs: { topic: 'soak' }, async: true });
      must(res, 202, 'POST /flows/{id}/run async');
      acked.asyncRuns.push({ processId: res.body.processId, auth });
      return;
    }
    case 'send_message': {
      must(await as('POST', `/messaging/sessions/${actor.sender.id}/messages`, { chatId: actor.target.address, text: `soak ${randomBytes(4).toString('hex')}` }), 201, 'POST …/messages');
      const entry = acked.messagesTo.get(actor.target.id) ?? { auth, count: 0 };
      entry.count++;
      acked.messagesTo.set(actor.target.id, entry);
      return;
    }
    case 'mcp_call':
      return callEchoAsUser(baseUrl, mcp);
    case 'doc_write': {
      const id = `d${randomBytes(6).toString('hex')}`;
      const document = { n: Math.floor(rand() * 100), tag: rand() < 0.5 ? 'even' : 'odd', at: new Date().toISOString() };
      must(await as('POST', `/db/collections/${actor.collection}/documents`, { id, document }), 201, 'POST …/documents');
      acked.documents.push({ auth, collection: actor.collection, id, document });
      return;
    }
    case 'doc_search': {
      const res = await as('POST', `/db/collections/${actor.collection}/search`, { filter: { n: { $gte: Math.floor(rand() * 100) } }, sort: { n: -1 }, limit: 20 });
      must(res, 200, 'POST …/search');
      return;
    }
    case 'memory_save': {
      const res = await as('POST', '/db/memory', { operation: 'save', scope: { userId: 'soak' }, text: `the soak remembers ${randomBytes(4).toString('hex')}` });
      must(res, 200, 'POST /db/memory save');
      acked.memories.push({ auth, id: res.body.memory.id });
      return;
    }
    case 'login': {
      const res = await login(baseUrl, actor.user.email, actor.user.password);
      if (res.status !== 200) throw new Error(`POST /auth/login answered ${res.status}`);
      // The fresh token from now on (a soak longer than JWT_TTL_SECONDS would otherwise end in 401s).
      Object.assign(actor.user.auth, res.auth);
      return;
    }
  }
}
