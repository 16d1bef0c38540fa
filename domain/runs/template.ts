import { RunInputError } from './errors.js';
import { MAX_RENDERED_LENGTH } from './limits.js';

/**
 * Prompt and transform templates: `{{inputs.x}}`, `{{previous}}`, `{{nodes.<id>.output}}`,
 * `{{variables.x}}`, each followed by any dotted path (`{{nodes.fetch.output.items.0.name}}`).
 * No code runs: a placeholder is a path lookup, nothing else.
 *
 * - Strings render as they are, numbers and booleans with String(), objects and arrays as JSON,
 *   null as ''.
 * - A path that leads nowhere renders as '' (like Mustache or Jinja); unresolvedPlaceholders lists
 *   them so a caller can warn. Inherited properties (`constructor`, `__proto__`) lead nowhere.
 * - A path that continues into a string holding JSON looks inside it (a model that answered
 *   `{"sentiment": "positive"}` gives `{{previous.sentiment}}` = positive).
 * - `{{…}}` whose first word is not one of the four roots is left as written, so prompts can still
 *   show template syntax of their own.
 * - Substituted text is never scanned again.
 */
export interface TemplateContext {
  inputs: Record<string, unknown>;
  previous: unknown;
  nodes: Record<string, { output: unknown }>;
  variables: Record<string, unknown>;
  /**
   * A workflow's state (set_state, queries): `{{state.x}}` is a root only where a state is given,
   * so a run's prompt that shows `{{state…}}` keeps it as written, as before.
   */
  state?: Record<string, unknown>;
}

export const TEMPLATE_ROOTS = ['inputs', 'previous', 'nodes', 'variables'] as const;
const PLACEHOLDER = /\{\{\s*(inputs|previous|nodes|variables)((?:\.[^\s.{}]+)*)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*(inputs|previous|nodes|variables)((?:\.[^\s.{}]+)*)\s*\}\}$/;
const STATE_PLACEHOLDER = /\{\{\s*(inputs|previous|nodes|variables|state)((?:\.[^\s.{}]+)*)\s*\}\}/g;
const STATE_WHOLE_PLACEHOLDER = /^\{\{\s*(inputs|previous|nodes|variables|state)((?:\.[^\s.{}]+)*)\s*\}\}$/;
const placeholders = (context: TemplateContext) => (context.state ? STATE_PLACEHOLDER : PLACEHOLDER);
const wholePlaceholder = (context: TemplateContext) => (context.state ? STATE_WHOLE_PLACEHOLDER : WHOLE_PLACEHOLDER);

type JsonCache = Map<string, unknown>;

function parsedJson(text: string, cache: JsonCache): unknown {
  if (cache.has(text)) return cache.get(text);
  let value: unknown;
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      value = JSON.parse(t);
    } catch {
      value = undefined;
    }
  }
  cache.set(text, value);
  return value;
}

function step(value: unknown, segment: string, cache: JsonCache): unknown {
  if (typeof value === 'string') value = parsedJson(value, cache);
  if (Array.isArray(value)) return /^\d+$/.test(segment) ? value[Number(segment)] : undefined;
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, segment)) return (value as Record<string, unknown>)[segment];
  return undefined;
}

function resolve(context: TemplateContext, root: string, path: string, cache: JsonCache): unknown {
  let value: unknown = context[root as keyof TemplateContext];
  for (const segment of path.split('.').slice(1)) {
    value = step(value, segment, cache);
    if (value === undefined) return undefined;
  }
  return value;
}

export function renderValueAsText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  return String(value);
}

export function renderTemplate(template: string, context: TemplateContext): string {
  const cache: JsonCache = new Map();
  let length = template.length;
  return template.replace(placeholders(context), (whole, root: string, path: string) => {
    const text = renderValueAsText(resolve(context, root, path, cache));
    length += text.length - whole.length;
    if (length > MAX_RENDERED_LENGTH) throw new RunInputError('TEMPLATE_TOO_LARGE', `the rendered template would exceed ${MAX_RENDERED_LENGTH} characters`);
    return text;
  });
}

/**
 * Like renderTemplate, but a template that is exactly one placeholder gives the value itself, not
 * its text (`{{nodes.fetch.output}}` stays an object); a path leading nowhere still gives ''.
 */
export function renderValue(template: string, context: TemplateContext): unknown {
  const whole = wholePlaceholder(context).exec(template);
  if (!whole) return renderTemplate(template, context);
  const value = resolve(context, whole[1], whole[2], new Map());
  return value === undefined ? '' : value;
}

/** The placeholders of `template` that lead nowhere in `context`, as written. */
export function unresolvedPlaceholders(template: string, context: TemplateContext): string[] {
  const cache: JsonCache = new Map();
  return [...template.matchAll(placeholders(context))].filter((m) => resolve(context, m[1], m[2], cache) === undefined).map((m) => m[0]);
}
