/**
 * Secrets in node settings (README "Security"): every value of `data.webhookConfig.headers`, and
 * every variable written as `{"$secret": "…"}` anywhere in `data.variables`. They enter events
 * only sealed (`sealed:<hint>:<AES-GCM box>`, sealed by the command layer with the SecretSealer
 * port), are opened only by the process that runs the node, and every read shows them masked
 * (`••••` plus the last 4 characters of secrets of 12 characters or more). A write that sends a
 * mask back keeps the secret stored at the same place. Everything here is pure: sealing and
 * opening the box are functions handed in.
 */

export const SECRET_KEY = '$secret';
export const SECRET_MASK = '••••';
/** Shorter secrets show no hint at all: four characters of eight would be half the secret. */
const HINT_MIN_LENGTH = 12;
const HINT_LENGTH = 4;
const SEALED = /^sealed:([^:]*):(v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

/** A path in node data: `['webhookConfig', 'headers', 'Authorization']`, `['variables', 'api', 'key']`. */
export type SecretPath = readonly string[];
type SecretFn = (value: string, path: SecretPath) => string;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export const isSecretVariable = (v: unknown): v is { $secret: string } => isRecord(v) && Object.keys(v).length === 1 && typeof v[SECRET_KEY] === 'string';
export const isSealedSecret = (v: string): boolean => SEALED.test(v);
/** What reads show, and what a client sends back to keep a secret: `••••` plus at most 4 characters. */
export const isMaskedSecret = (v: string): boolean => v.startsWith(SECRET_MASK) && Array.from(v).length <= SECRET_MASK.length + HINT_LENGTH;
const isClear = (v: string) => !isSealedSecret(v) && !isMaskedSecret(v);

function hintOf(plaintext: string): string {
  const chars = Array.from(plaintext);
  return chars.length >= HINT_MIN_LENGTH ? chars.slice(-HINT_LENGTH).join('') : '';
}

/** `sealBox` is the SecretSealer's `seal` (AES-256-GCM, `v1.…`); the hint travels beside the box for masking without the key. */
export function sealSecret(plaintext: string, sealBox: (plaintext: string) => string): string {
  return `sealed:${encodeURIComponent(hintOf(plaintext))}:${sealBox(plaintext)}`;
}

/** The plaintext of a sealed value; a value stored in clear (written before sealing existed) is returned as it is. */
export function openSecret(value: string, openBox: (box: string) => string): string {
  const match = SEALED.exec(value);
  return match ? openBox(match[2]) : value;
}

/** The masked form of any secret value: sealed (from its hint), clear (from the value), or already masked. */
export function maskSecret(value: string): string {
  if (isMaskedSecret(value)) return value;
  const match = SEALED.exec(value);
  if (!match) return SECRET_MASK + hintOf(value);
  try {
    return SECRET_MASK + decodeURIComponent(match[1]);
  } catch {
    return SECRET_MASK;
  }
}

// ---------------------------------------------------------------- where secrets are

function mapVariables(value: unknown, path: string[], fn: SecretFn): unknown {
  if (isSecretVariable(value)) return { [SECRET_KEY]: fn(value.$secret, path) };
  if (Array.isArray(value)) return value.map((v, i) => mapVariables(v, [...path, String(i)], fn));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapVariables(v, [...path, k], fn)]));
  return value;
}

/**
 * A copy of node data (whole or a patch's part) with `fn` applied to each secret value; the input
 * is never changed (events handed out by the store are shared and frozen). Values of other shapes
 * are left for validation to refuse.
 */
export function mapNodeSecrets<T>(data: T, fn: SecretFn): T {
  if (!isRecord(data)) return data;
  let out: Record<string, unknown> = data;
  const config = data.webhookConfig;
  if (isRecord(config) && isRecord(config.headers)) {
    const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k, typeof v === 'string' ? fn(v, ['webhookConfig', 'headers', k]) : v]));
    out = { ...out, webhookConfig: { ...config, headers } };
  }
  if (isRecord(data.variables)) out = { ...out, variables: mapVariables(data.variables, ['variables'], fn) };
  return out as T;
}

function secretsOf(data: unknown): Map<string, string> {
  const found = new Map<string, string>();
  mapNodeSecrets(data, (value, path) => (found.set(JSON.stringify(path), value), value));
  return found;
}

export const hasSecrets = (data: unknown): boolean => secretsOf(data).size > 0;
export const hasClearSecrets = (data: unknown): boolean => [...secretsOf(data).values()].some(isClear);
/** Paths (`webhookConfig.headers.Authorization`) of values neither sealed nor masked. */
export function clearSecretFields(data: unknown): string[] {
  return [...secretsOf(data).entries()].filter(([, v]) => isClear(v)).map(([p]) => (JSON.parse(p) as string[]).join('.'));
}

/** For the command layer: every value a client sent is sealed, except masks (which stand for the stored value). */
export const sealNodeSecrets = <T>(data: T, sealBox: (plaintext: string) => string): T =>
  mapNodeSecrets(data, (v) => (isMaskedSecret(v) ? v : sealSecret(v, sealBox)));

/** For stored values: seals what is still in clear, leaves sealed values (and masks) alone. */
export const sealClearSecrets = <T>(data: T, sealBox: (plaintext: string) => string): T =>
  mapNodeSecrets(data, (v) => (isClear(v) ? sealSecret(v, sealBox) : v));

export const maskNodeSecrets = <T>(data: T): T => mapNodeSecrets(data, maskSecret);

/**
 * The masks of `data` replaced by the values stored at the same path in `stored` (a node's current
 * data), when the stored value masks to exactly that mask. A mask with nothing to stand for is a
 * problem: silently storing `••••1234` would make the node send it.
 */
export function keepStoredSecrets<T>(data: T, stored: unknown, prefix: string): { data: T; problems: Array<{ field: string; message: string }> } {
  const problems: Array<{ field: string; message: string }> = [];
  const previous = secretsOf(stored);
  const kept = mapNodeSecrets(data, (value, path) => {
    if (!isMaskedSecret(value)) return value;
    const old = previous.get(JSON.stringify(path));
    if (old !== undefined && maskSecret(old) === value) return old;
    problems.push({ field: [prefix, ...path].join('.'), message: 'a masked secret keeps the value stored at the same place, and none matches here: send the real value' });
    return value;
  });
  return { data: kept, problems };
}

/** The node's variables as a run sees them: each `{"$secret": …}` becomes its plaintext. */
export function openSecretVariables(variables: Record<string, unknown>, openBox: (box: string) => string): Record<string, unknown> {
  const open = (value: unknown): unknown => {
    if (isSecretVariable(value)) return openSecret(value.$secret, openBox);
    if (Array.isArray(value)) return value.map(open);
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, open(v)]));
    return value;
  };
  return open(variables) as Record<string, unknown>;
}

// ---------------------------------------------------------------- in events

/**
 * Node data inside the events that carry it: the flow events, and RunRequested (whose `definition`
 * snapshots the flow's nodes for the run); other events are returned unchanged.
 */
export function mapFlowEventNodeData(type: string, data: unknown, fn: (nodeData: unknown) => unknown): unknown {
  if (!isRecord(data)) return data;
  const inNodes = (nodes: unknown) => (Array.isArray(nodes) ? nodes.map((n) => (isRecord(n) ? { ...n, data: fn(n.data) } : n)) : nodes);
  switch (type) {
    case 'RunRequested':
      return isRecord(data.definition) ? { ...data, definition: { ...data.definition, nodes: inNodes(data.definition.nodes) } } : data;
    case 'FlowCreated':
    case 'FlowReplaced':
    case 'FlowSecretsResealed':
      return { ...data, nodes: inNodes(data.nodes) };
    case 'NodeAdded':
      return isRecord(data.node) ? { ...data, node: { ...data.node, data: fn(data.node.data) } } : data;
    case 'NodeUpdated':
      return data.data === undefined ? data : { ...data, data: fn(data.data) };
    default:
      return data;
  }
}

export const FLOW_EVENTS_WITH_NODE_DATA = ['FlowCreated', 'FlowReplaced', 'NodeAdded', 'NodeUpdated', 'FlowSecretsResealed'] as const;
/** Every event type that carries node data, run snapshots included: what the upcasters and the reseal look at. */
export const EVENTS_WITH_NODE_DATA = [...FLOW_EVENTS_WITH_NODE_DATA, 'RunRequested'] as const;

export const maskFlowEventSecrets = (type: string, data: unknown): unknown => mapFlowEventNodeData(type, data, maskNodeSecrets);

export function flowEventHasClearSecrets(type: string, data: unknown): boolean {
  let found = false;
  mapFlowEventNodeData(type, data, (d) => ((found ||= hasClearSecrets(d)), d));
  return found;
}
