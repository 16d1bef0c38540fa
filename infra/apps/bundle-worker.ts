/**
 * The code of the build worker thread, as a string evaluated by `new Worker(code, { eval: true })`
 * (a classic CommonJS script: no TypeScript loader needed in the thread, same code under tsx and in
 * dist/). It bundles the entries with esbuild over a virtual file system made of the app's files
 * only, plus the allowlisted packages (`workerData.packages`), which esbuild resolves from the service's
 * own directory (`packages.root`, its node_modules) with the browser's conditions. Any other bare
 * import is a build error at the importing file and line (its specifier kept in `refused`, so the
 * main thread can answer `PACKAGE_NOT_ALLOWED`); a URL is an error too: nothing is downloaded. The
 * main thread terminates the worker past the time limit.
 */
export const BUNDLE_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const esbuild = require(workerData.esbuildPath);
const files = new Map(workerData.files.map((f) => [f.path, Buffer.from(f.content)]));
const allowed = new Set(workerData.packages.allowed);
const refused = new Set();
const isUrl = (spec) => /^[a-z][a-z0-9+.-]*:/i.test(spec) || spec.startsWith('//');
const EXTENSIONS = ['', '.ts', '.tsx', '.js', '.jsx', '.mjs', '.mts', '.json', '.css', '/index.ts', '/index.tsx', '/index.js', '/index.jsx'];
const LOADERS = { ts: 'ts', mts: 'ts', cts: 'ts', tsx: 'tsx', js: 'js', mjs: 'js', cjs: 'js', jsx: 'jsx', json: 'json', css: 'css', txt: 'text', svg: 'dataurl', png: 'dataurl', jpg: 'dataurl', jpeg: 'dataurl', gif: 'dataurl', webp: 'dataurl' };
function normalise(parts) {
  const out = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') { if (out.length === 0) return null; out.pop(); continue; }
    out.push(p);
  }
  return out.join('/');
}
const virtualFs = {
  name: 'app-files',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind === 'entry-point') return { path: args.path, namespace: 'app' };
      // A package's own imports (and our build.resolve below): esbuild's resolution on disk.
      if (args.namespace === 'file' || (args.pluginData && args.pluginData.allowedPackage)) return undefined;
      const spec = args.path;
      if (isUrl(spec)) return { errors: [{ text: 'cannot import "' + spec + '": URLs are never fetched; use the app\'s own files or an allowed package' }] };
      if (!spec.startsWith('./') && !spec.startsWith('../') && !spec.startsWith('/')) {
        if (!allowed.has(spec)) {
          refused.add(spec);
          return { errors: [{ text: workerData.packages.refusal.replace('%s', spec) }] };
        }
        const found = await build.resolve(spec, { kind: args.kind, resolveDir: workerData.packages.root, pluginData: { allowedPackage: true } });
        if (found.errors.length) return { errors: [{ text: 'package "' + spec + '" is allowed but not installed with the service (run npm install): ' + found.errors[0].text }] };
        return { path: found.path, namespace: found.namespace, sideEffects: found.sideEffects };
      }
      const from = spec.startsWith('/') ? [] : args.importer.split('/').slice(0, -1);
      const base = normalise([...from, ...spec.split('/')]);
      if (base === null) return { errors: [{ text: 'import "' + spec + '" leaves the app' }] };
      for (const ext of EXTENSIONS) {
        const candidate = (base + ext).replace(/^\//, '');
        if (files.has(candidate)) return { path: candidate, namespace: 'app' };
      }
      return { errors: [{ text: 'cannot resolve "' + spec + '": no such file in the app' }] };
    });
    build.onLoad({ filter: /.*/, namespace: 'app' }, (args) => {
      const ext = args.path.includes('.') ? args.path.slice(args.path.lastIndexOf('.') + 1).toLowerCase() : '';
      const contents = files.get(args.path);
      if (contents === undefined) return { errors: [{ text: 'no such file: ' + args.path }] };
      return { contents, loader: LOADERS[ext] || 'text', resolveDir: '/' };
    });
  },
};
const problemOf = (m) => ({ file: m.location ? m.location.file : null, line: m.location ? m.location.line : null, column: m.location ? m.location.column + 1 : null, message: m.text });
(async () => {
  try {
    const result = await esbuild.build({
      entryPoints: workerData.entries,
      bundle: true,
      write: false,
      outdir: '/out',
      outbase: '/',
      entryNames: '[dir]/[name]',
      format: 'iife',
      target: 'es2020',
      platform: 'browser',
      jsx: 'transform',
      minify: false,
      sourcemap: false,
      logLevel: 'silent',
      absWorkingDir: '/',
      // Packages branch on it: esbuild's default without minify is "development", which would ship
      // React's development build (twice the size, dev-only warnings) to every visitor.
      define: { 'process.env.NODE_ENV': '"production"' },
      plugins: [virtualFs],
    });
    const outputs = result.outputFiles.map((o) => ({ path: o.path.replace(/^\/out\//, ''), bytes: o.contents }));
    parentPort.postMessage({ ok: true, outputs, warnings: result.warnings.map(problemOf) });
  } catch (err) {
    const errors = Array.isArray(err && err.errors) ? err.errors.map(problemOf) : [{ file: null, line: null, column: null, message: String((err && err.message) || err) }];
    parentPort.postMessage({ ok: false, errors, warnings: Array.isArray(err && err.warnings) ? err.warnings.map(problemOf) : [], refused: [...refused] });
  }
})();
`;
