/**
 * Size caps for what MCP servers send back. A tool result or a resource can be arbitrarily large;
 * it ends up in events and read models, so it is cut to `maxBytes` (serialized JSON) with a flag
 * instead of failing the call or the worker. Text is shortened; items that cannot be shortened
 * meaningfully (images, audio, embedded blobs) are dropped when they do not fit, and a short text
 * note says what was dropped.
 */

const byteLength = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '');

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes (never a broken character). */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  return buf.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD+$/, '');
}

/** The longest prefix of `text` (never half a surrogate pair) for which `fits` holds; binary search. */
function longestPrefix(text: string, fits: (prefix: string) => boolean): string {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(safeSlice(text, mid))) lo = mid;
    else hi = mid - 1;
  }
  return safeSlice(text, lo);
}

function safeSlice(text: string, end: number): string {
  const code = text.charCodeAt(end - 1);
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, end - 1) : text.slice(0, end);
}

type Item = Record<string, unknown>;

const note = (maxBytes: number, dropped: number, structuredDropped: boolean) => ({
  type: 'text',
  text: `[truncated to ${maxBytes} bytes${dropped ? `; ${dropped} item(s) dropped` : ''}${structuredDropped ? '; structuredContent dropped' : ''}]`,
});

export interface CappedContent {
  content: unknown[];
  structuredContent?: unknown;
  truncated: boolean;
}

/** Caps a tool result's content and structured content together to `maxBytes` of JSON. */
export function capToolContent(content: unknown[], structuredContent: unknown, maxBytes: number): CappedContent {
  if (byteLength({ content, structuredContent }) <= maxBytes) return { content, structuredContent, truncated: false };
  // Room for the note, at its longest (every item and the structured content dropped).
  const budget = maxBytes - byteLength(note(maxBytes, content.length, structuredContent !== undefined)) - 1;
  const out: unknown[] = [];
  let dropped = 0;
  const fits = (items: unknown[]) => byteLength({ content: items }) <= budget;
  for (const raw of content) {
    const item = (raw ?? {}) as Item;
    if (fits([...out, item])) {
      out.push(item);
      continue;
    }
    if (item.type === 'text' && typeof item.text === 'string') {
      const text = longestPrefix(item.text, (t) => fits([...out, { ...item, text: t }]));
      if (text.length > 0) out.push({ ...item, text });
      else dropped++;
      continue;
    }
    dropped++;
  }
  // Structured content is a whole (a cut JSON value is garbage): kept only if it still fits.
  const keepStructured = structuredContent !== undefined && byteLength({ content: out, structuredContent }) <= budget;
  out.push(note(maxBytes, dropped, structuredContent !== undefined && !keepStructured));
  return { content: out, structuredContent: keepStructured ? structuredContent : undefined, truncated: true };
}

export interface ResourceItem {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** Caps resource contents: text shortened, base64 blobs that do not fit dropped (a cut blob is garbage). */
export function capResourceContents(contents: ResourceItem[], maxBytes: number): { contents: ResourceItem[]; truncated: boolean } {
  if (byteLength(contents) <= maxBytes) return { contents, truncated: false };
  const out: ResourceItem[] = [];
  // Each entry keeps at least its uri and type (they tell what was there), so room for the bare
  // entries still to come is kept while a text is cut.
  const bares: ResourceItem[] = contents.map((item) => ({ uri: item.uri, ...(item.mimeType ? { mimeType: item.mimeType } : {}) }));
  contents.forEach((item, i) => {
    const fits = (candidate: ResourceItem) => byteLength([...out, candidate, ...bares.slice(i + 1)]) <= maxBytes;
    if (fits(item)) out.push(item);
    else if (typeof item.text === 'string' && fits({ ...bares[i], text: '' })) out.push({ ...bares[i], text: longestPrefix(item.text, (t) => fits({ ...bares[i], text: t })) });
    else if (fits(bares[i])) out.push(bares[i]);
  });
  return { contents: out, truncated: true };
}
