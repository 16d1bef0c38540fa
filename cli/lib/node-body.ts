import { readJsonFile } from './flow-file.js';
import { usageError } from './errors.js';

/** The options `nodes add` and `nodes edit` share. */
export interface NodeFlags {
  type?: string;
  data?: string;
  file?: string;
  label?: string;
  prompt?: string;
  model?: string;
  provider?: string;
  template?: string;
  webhookUrl?: string;
  position?: { x: number; y: number };
}

/** Which node type each convenience flag fills, and the data field it sets. */
const FLAG_FIELDS: Array<{ flag: keyof NodeFlags; option: string; nodeType: string | null }> = [
  { flag: 'label', option: '--label', nodeType: null },
  { flag: 'prompt', option: '--prompt', nodeType: 'llm' },
  { flag: 'model', option: '--model', nodeType: 'llm' },
  { flag: 'provider', option: '--provider', nodeType: 'llm' },
  { flag: 'template', option: '--template', nodeType: 'transform' },
  { flag: 'webhookUrl', option: '--webhook-url', nodeType: 'webhook' },
];

/** `--position x,y`. */
export function parsePosition(value: string): { x: number; y: number } {
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$/.exec(value);
  if (!m) throw usageError(`--position expects x,y (two numbers), not "${value}"`);
  return { x: Number(m[1]), y: Number(m[2]) };
}

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The node's `data` and, from a whole-node file, its `type`/`position`: `--data` (JSON) or `--file`
 * (the data object, or a node `{type, position, data}`), then the convenience flags on top.
 * A flag that does not belong to the node's type is a usage error, so a typo never saves a field
 * the node ignores. `current` is the node's data before an edit (nested webhookConfig is merged).
 */
export function nodeBodyOf(flags: NodeFlags, current: Record<string, any> = {}): { data: Record<string, any>; type?: string; position?: { x: number; y: number } } {
  if (flags.data !== undefined && flags.file !== undefined) throw usageError('give --data or --file, not both');
  let data: Record<string, any> = {};
  let type: string | undefined;
  let position = flags.position;
  if (flags.data !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.data);
    } catch (err) {
      throw usageError(`--data must be a JSON object: ${(err as Error).message}`);
    }
    if (!isObject(parsed)) throw usageError('--data must be a JSON object');
    data = parsed;
  } else if (flags.file !== undefined) {
    const doc = readJsonFile(flags.file);
    if (!isObject(doc)) throw usageError(`${flags.file} must hold a JSON object (the node's data, or a node {type, position, data})`);
    // A whole node has its data under `data` and no nodeType of its own.
    const whole = isObject(doc.data) && doc.nodeType === undefined;
    data = whole ? doc.data : doc;
    if (whole && typeof doc.type === 'string') type = doc.type;
    if (whole && isObject(doc.position) && position === undefined) position = doc.position as { x: number; y: number };
  }
  if (flags.type !== undefined) data = { ...data, nodeType: flags.type };
  const nodeType = data.nodeType ?? current.nodeType;
  for (const { flag, option, nodeType: owner } of FLAG_FIELDS) {
    if (flags[flag] === undefined) continue;
    if (owner && nodeType !== owner) throw usageError(`${option} is for ${owner} nodes, and this node is ${nodeType ? `a ${nodeType} node` : 'of no type (give --type)'}`);
  }
  if (flags.label !== undefined) data.label = flags.label;
  if (flags.prompt !== undefined) data.prompt = flags.prompt;
  if (flags.model !== undefined) data.model = flags.model;
  if (flags.provider !== undefined) data.llm = flags.provider;
  if (flags.template !== undefined) data.template = flags.template;
  // The service merges data key by key, not deeper: the rest of webhookConfig is sent along.
  if (flags.webhookUrl !== undefined) data.webhookConfig = { ...(current.webhookConfig ?? {}), ...(data.webhookConfig ?? {}), url: flags.webhookUrl };
  return { data, ...(type ? { type } : {}), ...(position ? { position } : {}) };
}
