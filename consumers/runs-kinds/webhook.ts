import { isSealedSecret, openSecret } from '../../domain/flows/secrets.js';
import { renderTemplate, RunInputError, type NodeKind, type NodeKindContext, type RunNode } from '../../domain/runs/index.js';
import { OutboundError, type OutboundHttp } from '../../ports/outbound-http.js';
import type { RunSettings } from '../../ports/runs.js';
import type { SecretSealer } from '../../ports/secret-sealer.js';

/**
 * The webhook kind: one HTTP call as `data.webhookConfig` says.
 * - `url` and header values are templates over the node's context (rendered as is, not
 *   URL-encoded: write `{{inputs.q}}` where the value is already URL-safe); header values are
 *   stored sealed and opened here, in the process that makes the call, and nowhere else;
 * - method POST when absent; GET and HEAD send no body; the others send `data.bodyTemplate`
 *   rendered, else the node's input as JSON. Without a Content-Type header it is
 *   application/json when the body parses as JSON, else text/plain;
 * - timeout: `webhookConfig.timeout` ms, never more than NODE_TIMEOUT_MS (the default);
 * - output: the response body, parsed when the Content-Type says JSON (text when it does not
 *   parse, with `metadata.invalidJson`), else text; null for an empty body;
 * - a non-2xx answer fails the node with WEBHOOK_HTTP_<status> (details: status and the start of
 *   the body), the way n8n's HTTP Request node does by default; `continueOnError` lets the run go
 *   on with `{error}` as the node's output. Outbound failures keep their OUTBOUND_* code.
 */
export class NodeKindError extends RunInputError {
  constructor(
    code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(code, message);
    this.name = 'NodeKindError';
  }
}

/** Responses above this fail the node: the output has to fit in its NodeCompleted event (768 KiB). */
export const WEBHOOK_MAX_RESPONSE_BYTES = 512 * 1024;
/** Response headers kept in the metadata (the rest can carry cookies or tokens). */
const KEPT_HEADERS = ['content-type', 'content-length', 'etag', 'last-modified', 'retry-after', 'x-request-id', 'location'];
const BODYLESS = new Set(['GET', 'HEAD']);
const ERROR_BODY_PREVIEW = 500;

const isJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** The URL as metadata shows it: no credentials, no query string (it may hold API keys). */
export function redactedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return '';
  }
}

interface WebhookRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/** A header value in clear: opened when sealed (values stored before sealing existed are clear already). */
function headerValue(name: string, value: string, openBox: ((box: string) => string) | undefined): string {
  if (!isSealedSecret(value)) return value;
  if (!openBox) throw new NodeKindError('NODE_SECRET_UNREADABLE', `header ${name} is sealed and this process cannot open it`, { header: name });
  try {
    return openSecret(value, openBox);
  } catch {
    // Another key sealed it (ENCRYPTION_KEY changed or differs between processes): never send the sealed text.
    throw new NodeKindError('NODE_SECRET_UNREADABLE', `header ${name} was sealed with another key; set it again`, { header: name });
  }
}

export function webhookRequestOf(node: RunNode, context: NodeKindContext, nodeTimeoutMs: number, openBox?: (box: string) => string): WebhookRequest {
  const config = node.data.webhookConfig;
  if (!config || typeof config.url !== 'string' || config.url.trim() === '') throw new NodeKindError('WEBHOOK_URL_MISSING', 'a webhook node needs webhookConfig.url');
  const url = renderTemplate(config.url, context).trim();
  const method = (config.method ?? 'POST').toUpperCase();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) headers[name] = renderTemplate(headerValue(name, value, openBox), context);
  let body: string | undefined;
  if (!BODYLESS.has(method)) {
    const template = node.data.bodyTemplate;
    body = typeof template === 'string' && template !== '' ? renderTemplate(template, context) : JSON.stringify(context.input ?? null);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = isJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
  }
  const asked = typeof config.timeout === 'number' && config.timeout > 0 ? config.timeout : nodeTimeoutMs;
  return { url, method, headers, body, timeoutMs: Math.min(asked, nodeTimeoutMs) };
}

function responseOutput(contentType: string, text: string): { output: unknown; invalidJson?: true } {
  if (text === '') return { output: null };
  if (/[/+]json\b/i.test(contentType)) {
    try {
      return { output: JSON.parse(text) };
    } catch {
      return { output: text, invalidJson: true };
    }
  }
  return { output: text };
}

/** What the webhook kind uses: the outbound HTTP port, the limits it applies, and the key that opens sealed header values. */
export interface WebhookKindPorts {
  outbound: OutboundHttp;
  secrets: Pick<SecretSealer, 'open'>;
  settings: Pick<RunSettings, 'NODE_TIMEOUT_MS' | 'ALLOW_PRIVATE_NETWORK'>;
}

export function webhookKind(ports: WebhookKindPorts): NodeKind {
  return {
    type: 'webhook',
    async execute(node, context) {
      const request = webhookRequestOf(node, context, ports.settings.NODE_TIMEOUT_MS, ports.secrets && ((box) => ports.secrets.open(box)));
      const started = Date.now();
      let response;
      try {
        response = await ports.outbound.fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          timeoutMs: request.timeoutMs,
          signal: context.signal,
          allowPrivateNetwork: ports.settings.ALLOW_PRIVATE_NETWORK,
          maxResponseBytes: WEBHOOK_MAX_RESPONSE_BYTES,
        });
      } catch (err) {
        if (err instanceof OutboundError) throw new NodeKindError(err.code, err.message, { ...err.details, url: redactedUrl(request.url) });
        throw err;
      }
      const durationMs = Date.now() - started;
      const text = response.body.toString('utf8');
      const headers = Object.fromEntries(KEPT_HEADERS.filter((h) => response.headers[h] !== undefined).map((h) => [h, response.headers[h]]));
      const url = redactedUrl(response.url);
      if (response.status < 200 || response.status > 299) {
        throw new NodeKindError(`WEBHOOK_HTTP_${response.status}`, `the webhook answered HTTP ${response.status}`, {
          status: response.status,
          url,
          body: text.slice(0, ERROR_BODY_PREVIEW),
        });
      }
      const { output, invalidJson } = responseOutput(response.headers['content-type'] ?? '', text);
      return {
        output,
        metadata: { status: response.status, headers, durationMs, url, method: request.method, redirects: response.redirects, ...(invalidJson && { invalidJson }) },
      };
    },
  };
}
