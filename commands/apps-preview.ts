import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import { appPreviewStreamId, previewAt, previewDecider, type LivePreview } from '../domain/apps/preview-decide.js';
import type { AppTenant } from '../domain/apps/state.js';
import { DomainError } from '../domain/shared/decider.js';
import type { AppDelivery, AppBuildResult, BuiltSite } from '../ports/app-delivery.js';
import type { EventStore } from '../ports/event-store.js';
import { loadApp, loadVisibleApp } from './apps.js';
import { handleAtContextTime, loadState, type CommandContext } from './handle.js';
import { constantTimeEqual, randomSecret, sha256 } from './users-credentials.js';

/**
 * Previews: one live preview URL per app, `…/apps-public/p/<appId>/<token>/`, serving the app's
 * current files (rebuilt when they change). The token (`apv_` + 256 random bits) is the only key:
 * only its sha256 is stored, and every request checks it against the stream's folded state, so a
 * revoke is seen by the next request in every process.
 */
export const PREVIEW_TOKEN_PREFIX = 'apv_';

export interface PreviewPorts {
  eventStore: EventStore;
  newId(): string;
}

export async function startPreview(ports: PreviewPorts, context: CommandContext, tenant: AppTenant, appId: string, ttlSeconds: number) {
  await loadVisibleApp(ports.eventStore, appId, tenant);
  const token = `${PREVIEW_TOKEN_PREFIX}${randomSecret()}`;
  const expiresAt = new Date(context.now.getTime() + ttlSeconds * 1000).toISOString();
  const previewId = ports.newId();
  const result = await handleAtContextTime(ports.eventStore, context, appPreviewStreamId(appId), previewDecider, {
    type: 'StartPreview', appId, previewId, tokenHash: sha256(token), expiresAt, by: context.actorId,
  });
  return { token, previewId, expiresAt, position: result.position };
}

export async function revokePreview(store: EventStore, context: CommandContext, tenant: AppTenant, appId: string) {
  await loadVisibleApp(store, appId, tenant);
  return handleAtContextTime(store, context, appPreviewStreamId(appId), previewDecider, { type: 'RevokePreview', appId, by: context.actorId });
}

/** The live preview this token opens at `now`, or null (wrong token, revoked, replaced, expired, app deleted). */
export async function resolvePreview(store: EventStore, appId: string, token: string, now: Date): Promise<LivePreview | null> {
  if (!token.startsWith(PREVIEW_TOKEN_PREFIX) || token.length > 200) return null;
  const { state } = await loadState(store, appPreviewStreamId(appId), previewDecider);
  const live = previewAt(state, now.toISOString());
  if (!live || !constantTimeEqual(sha256(token), live.tokenHash)) return null;
  const app = (await loadApp(store, appId)).state;
  if (!app.exists || app.deleted) return null;
  return live;
}

/** One build per key at a time in this process: concurrent first requests share it. */
// Keyed by the service's AppDelivery adapter: services in one process (tests) share no build.
const inFlight = new WeakMap<AppDelivery, Map<string, Promise<AppBuildResult>>>();

export async function buildOnce(delivery: AppDelivery, key: string, make: () => Promise<Parameters<AppDelivery['builder']['build']>[0]>): Promise<AppBuildResult | { ok: true; site: BuiltSite }> {
  const cached = delivery.sites.get(key);
  if (cached) return { ok: true, site: cached };
  let byKey = inFlight.get(delivery);
  if (!byKey) inFlight.set(delivery, (byKey = new Map()));
  let pending = byKey.get(key);
  if (!pending) {
    pending = make()
      .then((input) => delivery.builder.build(input))
      .then((result) => {
        if (result.ok) delivery.sites.set(key, result.site);
        return result;
      })
      .finally(() => byKey!.delete(key));
    byKey.set(key, pending);
  }
  return pending;
}

/**
 * The app's head as a built site, keyed by the app's version (a file change builds anew), with the
 * app's linked flow. A build error is returned as it is (the preview shows it with file and line).
 */
export async function previewSite(store: EventStore, delivery: AppDelivery, appId: string) {
  const { state } = await loadApp(store, appId);
  const result = await buildOnce(delivery, `preview:${appId}:${state.version}`, async () => ({ files: Object.values(state.files), contract: state.contract }));
  return { result, flowId: state.flowId, contract: state.contract };
}

const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, addUsedSchema: false });
// Module scope is safe: a schema's compiled validator depends on the schema text alone (its key), the same for every service.
/**
 * Compiled validators by schema text, the first 1 000 kept; a lookup does not refresh an entry (`peek`),
 * so the oldest compiled goes first. Boxed: a schema ajv cannot compile is remembered as null.
 */
const validators = new LRUCache<string, { validate: ValidateFunction | null }>({ max: 1_000 });

/**
 * The server's own check of a page's inputs against the contract's input schema (ajv, compiled once
 * per schema): the browser's check in app-client.js is for the user, this one is the rule. A schema
 * ajv cannot compile (saved before a stricter check) lets the inputs through to the flow.
 */
export function checkAppInputs(contract: { input: Record<string, unknown> }, inputs: unknown): void {
  const key = JSON.stringify(contract.input);
  let validate = validators.peek(key)?.validate;
  if (validate === undefined) {
    try {
      validate = ajv.compile(contract.input);
    } catch {
      validate = null;
    }
    validators.set(key, { validate });
  }
  if (validate && !validate(inputs)) {
    const errors = (validate.errors ?? []).slice(0, 20).map((e) => ({ path: e.instancePath || '/', message: e.message ?? 'is invalid' }));
    throw new DomainError('INVALID_INPUT', `the inputs do not match the app's contract: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, 'invalid', { errors });
  }
}
