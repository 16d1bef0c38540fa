#!/usr/bin/env node
// Bundles the web console (web/src/main.tsx, React + @xyflow/react) with esbuild into dist/web/:
// index.html, and content-hashed JS and CSS under assets/ that the service serves at / with a
// strict CSP (api/console.ts). Prints each file's size, raw and gzipped, and fails when the
// gzipped total passes the budget written below (the README's "Web console" section states it).
// Plain JavaScript, like build-if-stale.mjs: it runs before anything is compiled.
import { gzipSync } from 'node:zlib';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The gzipped size of everything the first page load fetches (JS + CSS + HTML), in bytes. */
export const BUNDLE_BUDGET_GZIP_BYTES = 300 * 1024;

const root = dirname(dirname(fileURLToPath(import.meta.url)));

export async function buildWeb({ outDir = join(root, 'dist', 'web'), quiet = false } = {}) {
  const started = Date.now();
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, 'assets');
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(root, 'web', 'src', 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    outdir: assets,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'error',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => join(root, file));
  const js = outputs.find((f) => f.endsWith('.js'));
  const css = outputs.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error('build-web: esbuild produced no JS or no CSS');
  const html = readFileSync(join(root, 'web', 'index.html'), 'utf8').replace('%JS%', basename(js)).replace('%CSS%', basename(css));
  writeFileSync(join(outDir, 'index.html'), html);
  const files = [join(outDir, 'index.html'), js, css];
  let raw = 0;
  let gz = 0;
  const lines = files.map((file) => {
    const body = readFileSync(file);
    const zipped = gzipSync(body).length;
    raw += body.length;
    gz += zipped;
    return `  ${basename(file).padEnd(28)} ${kb(body.length).padStart(9)} ${kb(zipped).padStart(9)} gzip`;
  });
  if (!quiet) {
    process.stderr.write(`build-web: the console in ${Date.now() - started} ms\n${lines.join('\n')}\n`);
    process.stderr.write(`  total ${kb(raw)}, ${kb(gz)} gzip; budget ${kb(BUNDLE_BUDGET_GZIP_BYTES)} gzip: ${gz <= BUNDLE_BUDGET_GZIP_BYTES ? 'within' : 'OVER'}\n`);
  }
  if (gz > BUNDLE_BUDGET_GZIP_BYTES) throw new Error(`build-web: the console is ${kb(gz)} gzipped, over its budget of ${kb(BUNDLE_BUDGET_GZIP_BYTES)}`);
  return { outDir, gzipBytes: gz, rawBytes: raw };
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildWeb().catch((err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
