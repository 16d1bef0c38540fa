/**
 * What the web console's browser tests share: the console built once per test process (esbuild,
 * about 0.2 s, into dist/web/ where the service serves it), Debian's Chromium through playwright-core,
 * a page signed in with a token, screenshots kept under artifacts/console/ (CI keeps that folder),
 * and a watch on what must never happen: a request leaving the service, a CSP violation, an
 * uncaught error in the page.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const SCREENSHOTS = join(ROOT, 'artifacts', 'console');
const TOKEN_KEY = 'flows.console.token';

let built: Promise<unknown> | null = null;

/** Builds the console into dist/web/ once per process (npm ci and npm start build it too). */
export function buildConsoleOnce(): Promise<unknown> {
  // @ts-expect-error: a plain .mjs script without declarations
  built ??= import('../../scripts/build-web.mjs').then((m: { buildWeb: (o: { quiet: boolean }) => Promise<unknown> }) => m.buildWeb({ quiet: true }));
  return built;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Requests to any origin but the service's (data: URLs aside). */
  elsewhere: string[];
  /** CSP violations and uncaught page errors. */
  problems: string[];
}

/** A fresh page (1280×800 unless given) on the service at `origin`, signed in with `token` when given. */
export async function openConsole(browser: Browser, origin: string, options: { token?: string; viewport?: { width: number; height: number } } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  if (options.token) await context.addInitScript(([key, value]) => localStorage.setItem(key, value), [TOKEN_KEY, options.token]);
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const problems: string[] = [];
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.origin !== origin && url.protocol !== 'data:') elsewhere.push(req.url());
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) problems.push(`CSP: ${msg.text()}`);
  });
  return { page, context, elsewhere, problems };
}

/** Keeps a screenshot of the page as artifacts/console/<name>.png. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The page's first contentful paint in ms, as the browser measured it (null when it has not painted). */
export async function firstContentfulPaint(page: Page): Promise<number | null> {
  // The entry is queued when the paint happens, which may be after the navigation the test awaited.
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 10_000 }).catch(() => undefined);
  return page.evaluate(() => {
    const entry = performance.getEntriesByName('first-contentful-paint')[0];
    return entry ? entry.startTime : null;
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * The page's WCAG 2.x A and AA violations as axe-core (the accessibility engine browsers' dev tools
 * use) finds them. axe is evaluated over the DevTools protocol, which the page's CSP does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<AxeViolation[]> {
  const source = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: unknown) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
}
