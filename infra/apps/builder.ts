import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { APP_PACKAGE_SPECIFIERS, PACKAGE_NOT_ALLOWED, packageNotAllowedMessage } from '../../domain/apps/packages.js';
import type { AppBuildInput, AppBuildResult, AppBuilder, AppDelivery, BuildProblem, BuiltFile, BuiltSite, BuiltSiteCache } from '../../ports/app-delivery.js';
import { BUNDLE_WORKER_SOURCE } from './bundle-worker.js';
import { appClientScript } from './client-script.js';

/** Sources that are bundled, never served as they are. */
const SOURCE_EXTENSIONS = /\.(ts|tsx|jsx|mts|cts)$/i;

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8', htm: 'text/html; charset=utf-8', css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8', txt: 'text/plain; charset=utf-8', md: 'text/plain; charset=utf-8',
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  avif: 'image/avif', ico: 'image/x-icon', woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf',
  webmanifest: 'application/manifest+json', xml: 'application/xml', wasm: 'application/wasm',
};

export function contentTypeOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return (dot >= 0 && CONTENT_TYPES[path.slice(dot + 1).toLowerCase()]) || 'application/octet-stream';
}

const builtFile = (path: string, body: Buffer): BuiltFile => ({
  body,
  contentType: contentTypeOf(path),
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
});

const SCRIPT_SRC = /(<script\b[^>]*?\bsrc\s*=\s*)(["'])([^"']+)\2/gi;

/** `dir/` of an HTML file joined with a relative script src; null when it leaves the app or is not local. */
function resolveLocal(htmlPath: string, src: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(src) || src.startsWith('//')) return null;
  const clean = src.split(/[?#]/)[0];
  const parts = clean.startsWith('/') ? [] : htmlPath.split('/').slice(0, -1);
  for (const p of clean.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(p);
  }
  return parts.join('/');
}

const jsPathOf = (path: string) => path.replace(SOURCE_EXTENSIONS, '.js');

export interface BuilderOptions {
  timeoutMs: number;
  maxOutputBytes: number;
}

/**
 * Where allowed packages are resolved from: this file's folder, so esbuild walks up to the
 * service's own node_modules exactly as Node found esbuild itself (the source tree under tsx, or
 * dist/ next to it) — the versions the service's lockfile installed, never the app's choice.
 */
const PACKAGES_ROOT = dirname(fileURLToPath(import.meta.url));
const PACKAGES = { root: PACKAGES_ROOT, allowed: [...APP_PACKAGE_SPECIFIERS], refusal: packageNotAllowedMessage('%s') };

/**
 * esbuild in a worker thread per build: the entries are the TS/TSX/JSX files that an HTML file's
 * `<script src>` names (their `src` is rewritten to the bundle, same path with `.js`); every other
 * file is served as it is, except TS/JSX sources; `app-client.js` is generated from the contract.
 */
export function createAppBuilder(options: BuilderOptions): AppBuilder {
  const esbuildPath = createRequire(import.meta.url).resolve('esbuild');
  return {
    async build(input: AppBuildInput): Promise<AppBuildResult> {
      const started = performance.now();
      const log: string[] = [];
      const elapsed = () => Math.round(performance.now() - started);
      const sources = new Map(input.files.map((f) => [f.path, Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8')]));
      const entries = new Set<string>();
      const html = new Map<string, string>();
      for (const [path, bytes] of sources) {
        if (!/\.html?$/i.test(path)) continue;
        const text = bytes.toString('utf8');
        html.set(
          path,
          text.replace(SCRIPT_SRC, (whole, head: string, quote: string, src: string) => {
            const target = resolveLocal(path, src);
            if (target === null || !SOURCE_EXTENSIONS.test(target) || !sources.has(target)) return whole;
            entries.add(target);
            return `${head}${quote}${src.replace(/\.(ts|tsx|jsx|mts|cts)(?=$|[?#])/i, '.js')}${quote}`;
          }),
        );
      }
      log.push(`${sources.size} files, ${entries.size} entr${entries.size === 1 ? 'y' : 'ies'} to bundle${entries.size ? `: ${[...entries].join(', ')}` : ''}`);
      const files = new Map<string, BuiltFile>();
      for (const [path, bytes] of sources) {
        if (SOURCE_EXTENSIONS.test(path)) continue;
        files.set(path, builtFile(path, html.has(path) ? Buffer.from(html.get(path)!, 'utf8') : bytes));
      }
      let warnings: BuildProblem[] = [];
      if (entries.size) {
        const outcome = await runWorker(esbuildPath, [...sources].map(([path, content]) => ({ path, content })), [...entries], options.timeoutMs);
        if (outcome === 'timeout') {
          log.push(`build stopped after ${options.timeoutMs} ms`);
          return { ok: false, code: 'APP_BUILD_TIMEOUT', message: `the build took longer than ${options.timeoutMs} ms`, problems: [], log, durationMs: elapsed() };
        }
        warnings = outcome.warnings.map(cleanProblem);
        for (const w of warnings) log.push(`warning: ${formatProblem(w)}`);
        if (!outcome.ok) {
          const problems = outcome.errors.map(cleanProblem);
          for (const p of problems) log.push(`error: ${formatProblem(p)}`);
          const first = problems[0];
          if (outcome.refused.length) {
            // Its own code, so a caller can tell "use another package" from a syntax error; the message names the list.
            return { ok: false, code: PACKAGE_NOT_ALLOWED, message: `build failed: ${formatProblem(problems.find((p) => p.message.startsWith(PACKAGE_NOT_ALLOWED)) ?? first)}`, problems, log, durationMs: elapsed(), allowedPackages: APP_PACKAGE_SPECIFIERS };
          }
          return { ok: false, code: 'APP_BUILD_FAILED', message: first ? `build failed: ${formatProblem(first)}` : 'build failed', problems, log, durationMs: elapsed() };
        }
        for (const out of outcome.outputs) {
          files.set(out.path, builtFile(out.path, Buffer.from(out.bytes)));
          log.push(`bundled ${out.path} (${out.bytes.byteLength} bytes)`);
        }
      }
      files.set('app-client.js', builtFile('app-client.js', Buffer.from(appClientScript(input.contract), 'utf8')));
      let bytes = 0;
      for (const f of files.values()) bytes += f.body.byteLength;
      if (bytes > options.maxOutputBytes) {
        log.push(`output is ${bytes} bytes, more than ${options.maxOutputBytes}`);
        return { ok: false, code: 'APP_BUILD_TOO_LARGE', message: `the build output is ${bytes} bytes, more than the limit of ${options.maxOutputBytes}`, problems: [], log, durationMs: elapsed() };
      }
      log.push(`built ${files.size} files, ${bytes} bytes in ${elapsed()} ms`);
      return { ok: true, site: { files, bytes }, log, durationMs: elapsed(), entries: [...entries] };
    },
  };
}

function cleanProblem(p: BuildProblem): BuildProblem {
  return { ...p, file: p.file ? p.file.replace(/^app:/, '').replace(/^\//, '') : null };
}

export function formatProblem(p: BuildProblem): string {
  return p.file ? `${p.file}:${p.line ?? 0}:${p.column ?? 0}: ${p.message}` : p.message;
}

type WorkerOutcome =
  | { ok: true; outputs: { path: string; bytes: Uint8Array }[]; warnings: BuildProblem[] }
  | { ok: false; errors: BuildProblem[]; warnings: BuildProblem[]; refused: string[] };

function runWorker(esbuildPath: string, files: { path: string; content: Buffer }[], entries: string[], timeoutMs: number): Promise<WorkerOutcome | 'timeout'> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(BUNDLE_WORKER_SOURCE, { eval: true, workerData: { esbuildPath, files, entries, packages: PACKAGES }, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    let done = false;
    const finish = (value: WorkerOutcome | 'timeout' | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      void worker.terminate();
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    worker.once('message', (message: WorkerOutcome) => finish(message));
    worker.once('error', (err) => finish(err));
    worker.once('exit', (code) => finish(new Error(`build worker exited with code ${code}`)));
  });
}

/** Least recently used first out (a read counts as a use). */
export function createSiteCache(maxEntries: number): BuiltSiteCache {
  const sites = new LRUCache<string, BuiltSite>({ max: maxEntries });
  return {
    get: (key) => sites.get(key),
    set(key, site) {
      sites.set(key, site);
    },
    delete(key) {
      sites.delete(key);
    },
  };
}

export function createAppDelivery(options: BuilderOptions & { cacheEntries: number }): AppDelivery {
  return { builder: createAppBuilder(options), sites: createSiteCache(options.cacheEntries) };
}
