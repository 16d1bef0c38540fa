import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { LRUCache } from 'lru-cache';
import { deployedSite, liveDeploymentOf, siteKey } from '../../commands/apps-deploy.js';
import { checkAppInputs, previewSite, resolvePreview } from '../../commands/apps-preview.js';
import { loadApp } from '../../commands/apps.js';
import { startRun as startRunCommand } from '../../commands/runs.js';
import { DomainError } from '../../domain/shared/decider.js';
import type { AppBuildResult, BuiltFile, BuiltSite } from '../../ports/app-delivery.js';
import type { Services } from '../../ports/services.js';
import { errorBody, httpStatusOf } from '../errors.js';

/**
 * Public serving of previews and deployments, outside `/api` (put in front of the Koa app by
 * `mountAppsPublic`, called from api/app.ts; no bearer credential is read here):
 *
 *   GET|HEAD /apps-public/p/<appId>/<token>/<path>   a preview (token from POST /api/apps/{id}/preview)
 *   GET|HEAD /apps-public/a/<appId>/<path>           the app's live deployment
 *   POST     …/_flow                                 calls the linked flow (body = the inputs; JSON object)
 *   OPTIONS  …/_flow                                 CORS preflight (the page runs in an opaque origin)
 *
 * Every answer carries the strict headers below. Without APPS_PUBLIC_ORIGIN the pages are served on
 * the service's own origin, so their CSP adds `sandbox` (no `allow-same-origin`): the page runs in an
 * opaque origin and can read no cookie, storage or response of the service's origin; its `_flow`
 * calls are then cross-origin, hence `Access-Control-Allow-Origin: *` (never with credentials).
 */
export const APPS_PUBLIC_PREFIX = '/apps-public/';
const MAX_CALL_BODY_BYTES = 64 * 1024;
const CALL_PATH = '_flow';

const BASE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "media-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors *",
].join('; ');
const SANDBOX = 'sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads';

export function publicHeaders(separateOrigin: boolean): Record<string, string> {
  return {
    'Content-Security-Policy': separateOrigin ? BASE_CSP : `${BASE_CSP}; ${SANDBOX}`,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
    'Access-Control-Allow-Origin': '*',
  };
}

interface Target {
  kind: 'preview' | 'deployment';
  appId: string;
  /** The file path inside the site ('' for the root). */
  path: string;
  /** `/apps-public/…/` up to the site root, for redirects. */
  root: string;
}

const SEGMENT = /^[A-Za-z0-9_-]{1,200}$/;

function parse(url: string): Target | { redirect: string } | null {
  const q = url.indexOf('?');
  const pathname = q === -1 ? url : url.slice(0, q);
  const parts = pathname.slice(APPS_PUBLIC_PREFIX.length).split('/');
  const [kind, appId] = parts;
  if (!appId || !SEGMENT.test(appId)) return null;
  let rest: string[];
  let rootParts: string[];
  if (kind === 'p') {
    const token = parts[2];
    if (!token || !SEGMENT.test(token)) return null;
    rootParts = ['p', appId, token];
    rest = parts.slice(3);
  } else if (kind === 'a') {
    rootParts = ['a', appId];
    rest = parts.slice(2);
  } else return null;
  const root = `${APPS_PUBLIC_PREFIX}${rootParts.join('/')}/`;
  if (rest.length === 0) return { redirect: root };
  let path: string;
  try {
    path = rest.map((p) => decodeURIComponent(p)).join('/');
  } catch {
    return null;
  }
  if (path.split('/').some((p) => p === '..' || p === '.') || path.includes('\\') || path.includes('\0')) return null;
  return { kind: kind === 'p' ? 'preview' : 'deployment', appId, path, root };
}

function lookup(site: BuiltSite, path: string) {
  if (path === '' || path.endsWith('/')) return site.files.get(`${path}index.html`);
  return site.files.get(path) ?? (path.includes('.') ? undefined : site.files.get(`${path}/index.html`));
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

type Headers = Record<string, string | number>;

function send(res: ServerResponse, status: number, headers: Headers, body: string | Buffer, head: boolean) {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { ...headers, 'Content-Length': bytes.length });
  res.end(head ? undefined : bytes);
}

const notFound = (res: ServerResponse, headers: Headers, head: boolean) =>
  send(res, 404, { ...headers, 'Cache-Control': 'no-store', 'Content-Type': 'text/plain; charset=utf-8' }, 'Not found\n', head);

function buildFailedPage(res: ServerResponse, headers: Headers, result: Extract<AppBuildResult, { ok: false }>, head: boolean) {
  const problems = result.problems.map((p) => `<li><code>${escapeHtml(p.file ? `${p.file}:${p.line ?? 0}:${p.column ?? 0}` : '(build)')}</code> ${escapeHtml(p.message)}</li>`).join('');
  const html = `<!doctype html><meta charset="utf-8"><title>Build failed</title><h1>Build failed: ${escapeHtml(result.code)}</h1><p>${escapeHtml(result.message)}</p><ul>${problems}</ul>`;
  send(res, 500, { ...headers, 'Cache-Control': 'no-store', 'Content-Type': 'text/html; charset=utf-8' }, html, head);
}

const sendJson = (res: ServerResponse, status: number, headers: Headers, body: unknown) =>
  send(res, status, { ...headers, 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' }, JSON.stringify(body), false);

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_CALL_BODY_BYTES) throw new DomainError('PAYLOAD_TOO_LARGE', `the inputs may be at most ${MAX_CALL_BODY_BYTES} bytes`, 'too_large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    throw new DomainError('INVALID_JSON', 'the body is not JSON', 'invalid', { field: 'body' });
  }
}

/** Runs the flow for a preview or deployment page: the flow's owner pays (a run with no requesting user, like a public trigger). */
async function callFlow(services: Services, req: IncomingMessage, target: Target, flowId: string | null, contract: { input: Record<string, unknown> }, credentialId: string) {
  await services.rateLimiter.hit(`apps-public:${req.socket.remoteAddress ?? 'unknown'}`, services.config.APPS_PUBLIC_CALLS_PER_MINUTE, 60_000);
  if (!flowId) throw new DomainError('APP_FLOW_NOT_LINKED', 'the app has no linked flow', 'conflict');
  const inputs = await readJson(req);
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs)) throw new DomainError('VALIDATION_FAILED', 'the inputs must be a JSON object', 'invalid', { fields: [{ field: 'body', message: 'must be an object' }] });
  checkAppInputs(contract, inputs);
  const requestId = randomUUID();
  // The run's events name what authorized it: the deployment (or preview) id is their correlation id.
  const context = { actorId: null, orgId: null, workspaceId: null, correlationId: `${target.kind}:${credentialId}`, causationId: null, requestId, now: services.now() };
  const started = await startRunCommand(
    { eventStore: services.eventStore, runs: services.runs, newId: services.newId, settings: services.config },
    context,
    { flowId, mode: 'flow', inputs: inputs as Record<string, unknown>, async: false, requestedBy: null, source: target.kind === 'preview' ? 'app-preview' : 'app', scope: null },
    { userId: null, idempotencyKey: null },
  );
  const state = started.state;
  if (!state) throw new DomainError('FLOW_CALL_FAILED', 'the run did not finish', 'upstream');
  const outputs = state.outputs ?? {};
  const keys = Object.keys(outputs);
  const output = keys.length === 1 ? outputs[keys[0]] : outputs;
  if (state.status !== 'completed') {
    const failure = state.failure as { code?: string; reason?: string } | null;
    throw new DomainError(failure?.code ?? 'FLOW_FAILED', failure?.reason ?? `the run is ${state.status}`, state.status === 'timed_out' ? 'timeout' : 'upstream', { processId: started.processId, status: state.status });
  }
  return { success: true, output, processId: started.processId, status: state.status };
}

/**
 * What a request needs from the log (the live deployment, the preview's validity), remembered with
 * the log's head position it was read at: while nothing was appended anywhere the answer cannot have
 * changed, so a static file costs one `headPosition()` instead of two stream reads. Any append (a
 * withdraw, a revoke, in any process) moves the head and the next request reads the streams again.
 */
class HeadMemo {
  /** Reads `peek`: only a computation makes a key the most recent, so the one computed longest ago goes first. */
  private readonly entries: LRUCache<string, { head: number; value: unknown }>;
  constructor(max = 10_000) {
    this.entries = new LRUCache({ max });
  }
  /** The remembered value while the head has not moved, else undefined (a remembered null stays null). */
  peek<T>(key: string, head: number): T | undefined {
    const hit = this.entries.peek(key);
    return hit && hit.head === head ? (hit.value as T) : undefined;
  }
  async get<T>(key: string, head: number, compute: () => Promise<T>): Promise<T> {
    const hit = this.entries.peek(key);
    if (hit && hit.head === head) return hit.value as T;
    const value = await compute();
    this.entries.set(key, { head, value });
    return value;
  }
}

/**
 * The handler of everything under /apps-public/, on node's request and response: these answers
 * need none of the API's middleware (no credential, no JSON body parser, their own headers and
 * error bodies), and static files are served at close to a bare server's rate (`npm run bench -- apps`).
 */
export function appsPublicHandler(services: Services): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const headers: Headers = publicHeaders(Boolean(services.config.APPS_PUBLIC_ORIGIN));
  const memo = new HeadMemo();
  // A file's answer headers, computed once per built file and kind (sites are immutable).
  const headerCache = { preview: new WeakMap<BuiltFile, Headers>(), deployment: new WeakMap<BuiltFile, Headers>() };
  const headersOf = (file: BuiltFile, kind: Target['kind']): Headers => {
    let h = headerCache[kind].get(file);
    if (!h) {
      h = { ...headers, 'Content-Type': file.contentType, ETag: file.etag, 'Content-Length': file.body.length, 'Cache-Control': kind === 'preview' ? 'no-store' : 'no-cache' };
      if (kind === 'preview') h['X-Robots-Tag'] = 'noindex';
      headerCache[kind].set(file, h);
    }
    return h;
  };
  return async (req, res) => {
    const head = req.method === 'HEAD';
    const target = parse(req.url ?? '/');
    if (!target) return notFound(res, headers, head);
    if ('redirect' in target) {
      res.writeHead(308, { ...headers, Location: target.redirect, 'Content-Length': 0 });
      res.end();
      return;
    }
    const isCall = target.path === CALL_PATH;
    if (req.method === 'OPTIONS' && isCall) {
      res.writeHead(204, { ...headers, 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'content-type', 'Access-Control-Max-Age': '600' });
      res.end();
      return;
    }
    const allowed = isCall ? req.method === 'POST' : req.method === 'GET' || head;
    if (!allowed) return sendJson(res, 405, { ...headers, Allow: isCall ? 'POST, OPTIONS' : 'GET, HEAD' }, errorBody('METHOD_NOT_ALLOWED', `${req.method} is not allowed here`));
    try {
      let site: AppBuildResult | { ok: true; site: BuiltSite };
      const position = await services.eventStore.headPosition();
      if (target.kind === 'preview') {
        const token = target.root.split('/')[4];
        const preview = await memo.get(`p:${target.appId}:${token}`, position, () => resolvePreview(services.eventStore, target.appId, token, services.now()));
        // Expiry is a matter of time, not of the log: checked on every request.
        if (!preview || preview.expiresAt <= services.now().toISOString()) return notFound(res, headers, head);
        if (isCall) {
          const app = (await loadApp(services.eventStore, target.appId)).state;
          return sendJson(res, 200, headers, await callFlow(services, req, target, app.flowId, app.contract, preview.previewId));
        }
        site = (await previewSite(services.eventStore, services.appDelivery, target.appId)).result;
      } else {
        const key = `a:${target.appId}`;
        const live = memo.peek<Awaited<ReturnType<typeof liveDeploymentOf>>>(key, position) ?? (await memo.get(key, position, () => liveDeploymentOf(services.eventStore, target.appId)));
        if (!live) return notFound(res, headers, head);
        if (isCall) return sendJson(res, 200, headers, await callFlow(services, req, target, live.deployment.flowId, live.contract, live.deployment.deploymentId));
        const cached = services.appDelivery.sites.get(siteKey(live.deployment.deploymentId));
        site = cached ? { ok: true, site: cached } : (await deployedSite(services.eventStore, services.appDelivery, target.appId, live.deployment)).result;
      }
      if (!site.ok) return buildFailedPage(res, headers, site, head);
      const file = lookup(site.site, target.path);
      if (!file) return notFound(res, headers, head);
      const fileHeaders = headersOf(file, target.kind);
      if (target.kind === 'deployment' && req.headers['if-none-match'] === file.etag) {
        res.writeHead(304, fileHeaders);
        res.end();
        return;
      }
      res.writeHead(200, fileHeaders);
      res.end(head ? undefined : file.body);
    } catch (err) {
      if (err instanceof DomainError) {
        const status = httpStatusOf(err);
        const retryAfter = (err.details as { retryAfterSeconds?: number } | undefined)?.retryAfterSeconds;
        return sendJson(res, status, status === 429 && retryAfter ? { ...headers, 'Retry-After': String(retryAfter) } : headers, errorBody(err.code, err.message, err.details));
      }
      services.logger.error({ err, url: req.url }, 'apps-public request failed');
      if (!res.headersSent) sendJson(res, 500, headers, errorBody('INTERNAL_ERROR', 'internal error'));
      else res.destroy();
    }
  };
}

/**
 * Puts the /apps-public/ handler in front of the Koa app: requests under that prefix never enter
 * Koa (api/app.ts calls this once); every other request goes to Koa unchanged.
 */
export function mountAppsPublic(app: Koa, services: Services): void {
  const handler = appsPublicHandler(services);
  const callback = app.callback.bind(app);
  app.callback = () => {
    const koa = callback();
    const wrapped = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      if (!req.url?.startsWith(APPS_PUBLIC_PREFIX)) return koa(req, res);
      return handler(req, res).catch((err) => {
        services.logger.error({ err, url: req.url }, 'apps-public request failed');
        res.destroy();
      });
    };
    return wrapped as unknown as ReturnType<typeof callback>;
  };
}
