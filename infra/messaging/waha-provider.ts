import type { ChatGroup, SessionStatus } from '../../domain/messaging/events.js';
import { SESSION_STATUSES } from '../../domain/messaging/events.js';
import { ProviderError, type MessagingProvider, type ProviderSessionRef, type ProviderStatus } from '../../ports/messaging-provider.js';

export interface WahaOptions {
  baseUrl: string;
  apiKey?: string;
  /** Key WAHA signs its webhook events with (X-Webhook-Hmac, SHA-512). */
  hmacKey?: string;
  timeoutMs: number;
}

/** The WAHA events we subscribe each session to; the inbound route maps them to `msgsession` events. */
export const WAHA_EVENTS = ['message', 'message.ack', 'session.status'] as const;

/** WAHA's ids come as strings or, on some engines, as `{_serialized}` objects. */
export function wahaId(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { _serialized?: unknown })._serialized === 'string') return (value as { _serialized: string })._serialized;
  return null;
}

const asStatus = (value: unknown): SessionStatus => (SESSION_STATUSES as readonly string[]).includes(String(value)) ? (value as SessionStatus) : 'FAILED';

/** WAHA's `me` (who the session is paired as), or undefined when it is missing or malformed. */
export function meOf(value: unknown): { id: string; pushName?: string } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const id = wahaId((value as { id?: unknown }).id);
  if (!id) return undefined;
  const pushName = (value as { pushName?: unknown }).pushName;
  return typeof pushName === 'string' ? { id, pushName } : { id };
}

/**
 * HTTP adapter to a WAHA server. The WAHA URL is operator configuration (not user input), so calls
 * go straight out with `fetch`, each with a deadline. WAHA's session name is our session id.
 */
export function wahaProvider(options: WahaOptions): MessagingProvider {
  const base = options.baseUrl.replace(/\/+$/, '');

  async function call<T = unknown>(method: string, path: string, body?: unknown, okStatuses: number[] = []): Promise<{ status: number; json: T | null }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.apiKey) headers['X-Api-Key'] = options.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      throw new ProviderError('MESSAGING_PROVIDER_UNREACHABLE', `WAHA ${method} ${path} failed: ${(err as Error).message}`);
    }
    const text = await response.text();
    let json: T | null = null;
    try {
      json = text ? (JSON.parse(text) as T) : null;
    } catch {
      json = null;
    }
    if (!response.ok && !okStatuses.includes(response.status)) {
      throw new ProviderError('MESSAGING_PROVIDER_ERROR', `WAHA ${method} ${path} answered ${response.status}`, response.status);
    }
    return { status: response.status, json };
  }

  const name = (s: ProviderSessionRef) => encodeURIComponent(s.providerSessionName);

  const provider: MessagingProvider = {
    kind: 'waha',
    async start(session, { callbackUrl }) {
      const config = callbackUrl
        ? { webhooks: [{ url: callbackUrl, events: [...WAHA_EVENTS], ...(options.hmacKey ? { hmac: { key: options.hmacKey } } : {}) }] }
        : {};
      const created = await call('POST', '/api/sessions', { name: session.providerSessionName, start: true, config }, [409, 422]);
      // Already known to WAHA (a retried request): make sure it runs.
      if (created.status === 409 || created.status === 422) await call('POST', `/api/sessions/${name(session)}/start`, {}, [422]);
      return provider.status(session);
    },
    async stop(session) {
      await call('POST', `/api/sessions/${name(session)}/stop`, {}, [404]);
    },
    async remove(session) {
      await call('DELETE', `/api/sessions/${name(session)}`, undefined, [404]);
    },
    async status(session): Promise<ProviderStatus> {
      const { json } = await call<{ status?: unknown; me?: unknown }>('GET', `/api/sessions/${name(session)}`);
      const status = asStatus(json?.status);
      const result: ProviderStatus = { status };
      const me = meOf(json?.me);
      if (me) result.me = me;
      if (status === 'SCAN_QR_CODE') {
        const qr = await provider.qr(session);
        if (qr) result.qr = qr;
      }
      return result;
    },
    async qr(session) {
      const { json } = await call<{ value?: unknown }>('GET', `/api/${name(session)}/auth/qr?format=raw`, undefined, [404, 422]);
      return typeof json?.value === 'string' ? json.value : null;
    },
    async me(session) {
      const { json } = await call('GET', `/api/sessions/${name(session)}/me`, undefined, [404]);
      return meOf(json) ?? null;
    },
    async sendText(session, input, _newId, now) {
      const { json } = await call<Record<string, unknown>>('POST', '/api/sendText', {
        session: session.providerSessionName,
        chatId: input.chatId,
        text: input.text,
        ...(input.replyTo ? { reply_to: input.replyTo } : {}),
      });
      const id = wahaId(json?.id) ?? wahaId((json?.key as { id?: unknown } | undefined)?.id);
      if (!id) throw new ProviderError('MESSAGING_PROVIDER_ERROR', 'WAHA sendText answered without a message id');
      const ts = typeof json?.timestamp === 'number' ? new Date(json.timestamp * 1000).toISOString() : now.toISOString();
      return { id, timestamp: ts };
    },
    async markRead(session, input) {
      await call('POST', '/api/sendSeen', { session: session.providerSessionName, chatId: input.chatId, ...(input.messageIds.length ? { messageIds: input.messageIds } : {}) });
    },
    async listGroups(session): Promise<ChatGroup[]> {
      const { json } = await call<unknown[]>('GET', `/api/${name(session)}/groups`);
      const groups: ChatGroup[] = [];
      for (const g of Array.isArray(json) ? json : []) {
        const raw = g as { id?: unknown; name?: unknown; subject?: unknown; participants?: unknown };
        const id = wahaId(raw.id);
        if (!id) continue;
        const participants = (Array.isArray(raw.participants) ? raw.participants : []).map((p) => wahaId((p as { id?: unknown })?.id ?? p)).filter((p): p is string => Boolean(p));
        groups.push({ id, name: String(raw.name ?? raw.subject ?? ''), participants });
      }
      return groups;
    },
  };
  return provider;
}
