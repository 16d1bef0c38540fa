import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { DomainError } from '../../domain/shared/decider.js';
import type { HtmlReader, HtmlText, HtmlTextOptions } from '../../ports/html-text.js';

/**
 * HTML → readable text with @mozilla/readability over linkedom. linkedom builds a DOM without a
 * script engine, so `<script>`, event handlers and `javascript:` URLs are inert text at most; they
 * are removed before extraction along with styles, templates, frames and embedded objects.
 * Readability is bounded by `maxElemsToParse`; when it refuses, finds nothing or overflows on a
 * hostile tree, the visible text of the body is walked iteratively (no recursion, whatever the depth).
 */
const STRIP = 'script,style,noscript,template,iframe,frame,frameset,object,embed,svg,math,canvas,link,meta';
/** Readability's time grows faster than the element count: past this many elements the body walk answers. */
const MAX_ELEMENTS = 10_000;
/** Readability walks ancestors per candidate: past this nesting its time grows fast, so the body walk answers instead. */
const MAX_DEPTH = 128;
const BLOCK = new Set(['P', 'DIV', 'SECTION', 'ARTICLE', 'LI', 'UL', 'OL', 'TR', 'TABLE', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BR', 'HEADER', 'FOOTER', 'MAIN', 'ASIDE', 'NAV', 'PRE', 'BLOCKQUOTE', 'DD', 'DT', 'DL', 'FIGURE', 'FIGCAPTION']);

export function createHtmlReader(): HtmlReader {
  return {
    read(html: string, options: HtmlTextOptions): HtmlText {
      const bytes = Buffer.byteLength(html, 'utf8');
      if (bytes > options.maxBytes) {
        throw new DomainError('HTML_TOO_LARGE', `the HTML is ${bytes} bytes; at most ${options.maxBytes} are read`, 'too_large', { field: 'data.html', bytes, maxBytes: options.maxBytes });
      }
      let document: Document;
      try {
        // linkedom builds no body around a fragment: give it a document to live in.
        const whole = /<(html|body)[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`;
        ({ document } = parseHTML(flattenDeepTags(whole)) as unknown as { document: Document });
      } catch {
        return cap({ title: null, text: stripTags(html), method: 'body' }, options.maxChars);
      }
      for (const el of Array.from(document.querySelectorAll(STRIP))) el.remove();
      const title = (document.querySelector('title')?.textContent ?? '').trim() || null;
      const shape = treeShape(document);
      if (shape.depth > MAX_DEPTH || shape.elements > MAX_ELEMENTS) {
        return cap({ title, text: normalise(visibleText(document, options.maxChars * 2)), method: 'body' }, options.maxChars);
      }
      // Readability changes the document it reads: when it finds nothing, the body walk reads a fresh parse.
      try {
        const article = new Readability(document, { maxElemsToParse: MAX_ELEMENTS, charThreshold: 200 }).parse();
        const text = normalise(article?.textContent ?? '');
        if (text.length > 0) return cap({ title: article?.title?.trim() || title, text, method: 'readability' }, options.maxChars);
      } catch {
        // A tree that overflows a recursive step: fall back below.
      }
      return cap({ title, text: normalise(visibleText(reparse(html), options.maxChars * 2)), method: 'body' }, options.maxChars);
    },
  };
}

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** Tags nested deeper than this are dropped before parsing (their text stays): the DOM builder's time grows with depth squared. */
const MAX_PARSE_DEPTH = 256;
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*?(\/?)>/g;

/** One linear scan over the tags, counting open elements; a tag past MAX_PARSE_DEPTH becomes a space. */
export function flattenDeepTags(html: string): string {
  let depth = 0;
  let deepest = 0;
  for (const m of html.matchAll(TAG)) {
    if (VOID.has(m[2]!.toLowerCase()) || m[3] === '/') continue;
    depth = m[1] === '/' ? Math.max(0, depth - 1) : depth + 1;
    if (depth > deepest) deepest = depth;
  }
  if (deepest <= MAX_PARSE_DEPTH) return html;
  depth = 0;
  return html.replace(TAG, (tag, close: string, name: string, selfClose: string) => {
    if (VOID.has(name.toLowerCase()) || selfClose === '/') return depth >= MAX_PARSE_DEPTH ? ' ' : tag;
    if (close === '/') {
      depth = Math.max(0, depth - 1);
      return depth >= MAX_PARSE_DEPTH ? ' ' : tag;
    }
    depth += 1;
    return depth > MAX_PARSE_DEPTH ? ' ' : tag;
  });
}

/** A fresh document without what never counts as text. */
function reparse(html: string): Document {
  const whole = /<(html|body)[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`;
  const { document } = parseHTML(flattenDeepTags(whole)) as unknown as { document: Document };
  for (const el of Array.from(document.querySelectorAll(STRIP))) el.remove();
  return document;
}

/** Deepest element nesting and element count, iteratively (stops counting past the bounds). */
function treeShape(document: Document): { depth: number; elements: number } {
  const root: Element | null = document.documentElement;
  if (!root) return { depth: 0, elements: 0 };
  let depth = 0;
  let elements = 0;
  const stack: Array<[Element, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [el, d] = stack.pop()!;
    elements += 1;
    if (d > depth) depth = d;
    if (depth > MAX_DEPTH || elements > MAX_ELEMENTS) break;
    const kids = el.children;
    for (let i = 0; i < kids.length; i += 1) stack.push([kids[i]!, d + 1]);
  }
  return { depth, elements };
}

/** The text nodes of the body in document order, with block boundaries as new lines; iterative. */
function visibleText(document: Document, budget: number): string {
  const root: Node | null = document.body ?? document.documentElement;
  if (!root) return '';
  const out: string[] = [];
  let size = 0;
  const stack: Array<{ node: Node; exit: boolean }> = [{ node: root, exit: false }];
  while (stack.length > 0 && size < budget) {
    const { node, exit } = stack.pop()!;
    if (exit) {
      out.push('\n');
      continue;
    }
    if (node.nodeType === 3) {
      const t = node.nodeValue ?? '';
      out.push(t);
      size += t.length;
      continue;
    }
    if (node.nodeType !== 1) continue;
    if (BLOCK.has((node as Element).tagName)) stack.push({ node, exit: true });
    const kids = node.childNodes;
    for (let i = kids.length - 1; i >= 0; i -= 1) stack.push({ node: kids[i]!, exit: false });
  }
  return out.join('');
}

function normalise(text: string): string {
  return text
    .replace(/[\t\f\v\r \u00a0]+/g, ' ')
    .replace(/ *\n[ \n]*/g, (m) => (m.split('\n').length > 2 ? '\n\n' : '\n'))
    .trim();
}

function stripTags(html: string): string {
  return normalise(html.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]*>/g, ' '));
}

function cap(r: { title: string | null; text: string; method: HtmlText['method'] }, maxChars: number): HtmlText {
  const truncated = r.text.length > maxChars;
  const text = truncated ? r.text.slice(0, maxChars) : r.text;
  return { title: r.title, text, chars: text.length, truncated, method: r.method };
}
