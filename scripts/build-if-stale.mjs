#!/usr/bin/env node
// Compiles the service (tsc -p tsconfig.build.json → dist/) only when its sources changed since the
// last build, so `npm start` costs a full compile (≈ 30 s on 2 cores) once, at `npm ci` (the
// `prepare` script) or after an edit, and a few milliseconds otherwise.
//
// "Changed" is a SHA-256 over the contents of every file the build reads from this repository (the
// .ts files under the build's include folders, both tsconfigs and package-lock.json, which pins the
// compiler and the declarations), kept in dist/.build-stamp. Contents, not mtimes: a checkout that
// rewrites files with the same bytes does not rebuild, and a clock that moves back cannot hide an edit.
// Plain JavaScript on purpose: it runs before anything is compiled.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const dist = join(root, 'dist');
const stampFile = join(dist, '.build-stamp');
const entry = join(dist, 'app', 'main.js');
const force = process.argv.includes('--force');

function buildIncludes() {
  // tsconfig.build.json is plain JSON (no comments): its include list is the folders compiled.
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8'));
  return config.include;
}

function* sourceFiles(folder, extensions = ['.ts']) {
  for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path, extensions);
    else if (extensions.some((ext) => entry.name.endsWith(ext))) yield path;
  }
}

function fingerprint() {
  const hash = createHash('sha256');
  const files = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((name) => join(root, name));
  for (const folder of buildIncludes()) files.push(...sourceFiles(join(root, folder)));
  // The web console (scripts/build-web.mjs) and the typed client it imports.
  files.push(...sourceFiles(join(root, 'web'), ['.ts', '.tsx', '.css', '.html', '.json']), join(root, 'client', 'index.ts'), join(root, 'scripts', 'build-web.mjs'));
  for (const file of files) {
    hash.update(relative(root, file)).update('\0');
    hash.update(existsSync(file) ? readFileSync(file) : '').update('\0');
  }
  return `${files.length} ${hash.digest('hex')}`;
}

function compilerPath() {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    process.stderr.write('build: the TypeScript compiler is not installed: run `npm ci` (with dev dependencies) first\n');
    process.exit(1);
  }
}

const wanted = fingerprint();
const built = existsSync(stampFile) && existsSync(entry) ? readFileSync(stampFile, 'utf8').trim() : null;
if (!force && built === wanted) process.exit(0);

process.stderr.write(`build: ${built ? 'sources changed since the last build' : 'no build yet'}; compiling with tsconfig.build.json (about half a minute)…\n`);
const started = Date.now();
// A clean output: files of deleted sources must not linger in dist/.
rmSync(dist, { recursive: true, force: true });
const result = spawnSync(process.execPath, [compilerPath(), '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) {
  process.stderr.write('build: the compile failed (errors above); nothing was started\n');
  process.exit(result.status ?? 1);
}
const { buildWeb } = await import('./build-web.mjs');
try {
  await buildWeb();
} catch (err) {
  process.stderr.write(`build: the web console failed to build: ${err.message}\n`);
  process.exit(1);
}
writeFileSync(stampFile, `${wanted}\n`);
process.stderr.write(`build: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
