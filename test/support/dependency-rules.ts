// The dependency rule of DESIGN §2 as code: which source folder may import which, checked on the
// real import graph parsed with the TypeScript compiler (so an import named in a comment or a string
// is not mistaken for one), plus cycle detection over the value imports.
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export const SOURCE_FOLDERS = ['domain', 'lib', 'commands', 'projections', 'consumers', 'api', 'ports', 'infra', 'app'] as const;

/**
 * Top-level folders that hold TypeScript but are not part of the service's layers: the CLI and the
 * generated client (separate programs that talk HTTP), build scripts, tests. A new top-level folder
 * must be named here or in SOURCE_FOLDERS, so nothing escapes the rule by living in a new place.
 */
export const OUTSIDE_FOLDERS: readonly string[] = ['cli', 'client', 'scripts', 'test', 'bin', 'docs', 'web'];

export type Layer = (typeof SOURCE_FOLDERS)[number] | 'outside';

export type ImportKind = 'import' | 'export' | 'dynamic' | 'import-equals' | 'import-type-node';

export interface ImportEdge {
  /** importer, relative to the root, with forward slashes */
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly kind: ImportKind;
  /** `import type`, `export type`, every named specifier `type X`, or `typeof import('…')` */
  readonly typeOnly: boolean;
  /** resolved file relative to the root for relative specifiers; undefined for packages or unresolved paths */
  readonly target?: string;
  readonly unresolved?: boolean;
}

export interface Violation {
  readonly edge: ImportEdge;
  readonly importerLayer: Layer;
  /** target layer, or the package name for a package import */
  readonly targetDescription: string;
  readonly rule: string;
}

/**
 * Which layers each layer may import (relative imports). Only `app/`, the composition root, may
 * import anything, and nothing imports `app/`. `lib/` is plain helpers (sleep, backoff, digests)
 * that every layer but `domain/` may use; it imports nothing of ours.
 */
export const ALLOWED: Readonly<Record<Exclude<Layer, 'outside'>, readonly Layer[] | 'any'>> = {
  domain: ['domain'],
  lib: ['lib'],
  commands: ['domain', 'lib', 'ports', 'commands'],
  projections: ['domain', 'lib', 'ports', 'projections'],
  consumers: ['domain', 'lib', 'commands', 'ports', 'consumers'],
  api: ['domain', 'lib', 'commands', 'projections', 'ports', 'api'],
  ports: ['domain', 'ports'],
  infra: ['domain', 'lib', 'ports', 'infra'],
  app: 'any',
};

const RULE_TEXT: Readonly<Record<Exclude<Layer, 'outside'>, string>> = {
  domain: 'domain/ imports domain/ only',
  lib: 'lib/ imports lib/ only',
  commands: 'commands/ imports domain/, lib/, ports/, commands/',
  projections: 'projections/ imports domain/, lib/, ports/, projections/',
  consumers: 'consumers/ imports domain/, lib/, commands/, ports/, consumers/ (read models through a port)',
  api: 'api/ imports domain/, lib/, commands/, projections/, ports/, api/ (no consumers/, no concrete adapters)',
  ports: 'ports/ imports domain/, ports/',
  infra: 'infra/ (adapters) imports domain/, lib/, ports/, infra/ (the composition root in app/ wires them to the rest)',
  app: 'app/ imports anything',
};

/**
 * npm packages `domain/` may import: they compute and do no I/O, keep no clock and draw no randomness.
 * Every other package is refused in `domain/` until it is judged pure and added here.
 * `node:` modules: none is allowed in `domain/` (hashing and encoding that a decider needs come in with
 * the command, computed by the handler), bare built-in names (`crypto`, `fs`) likewise.
 */
export const DOMAIN_PURE_PACKAGES: readonly string[] = ['zod', 're2js', 'mingo', 'fast-json-patch'];

/**
 * Driver packages of the adapters: outside `infra/` and `app/` nothing may import them (ports
 * included, they are interfaces), so a handler, projector, consumer or route reaches storage, bus, mail, identity
 * providers and MCP peers only through a port.
 */
export const ADAPTER_PACKAGES: readonly string[] = [
  'better-sqlite3',
  'mongodb',
  'kafkajs',
  '@eventstore/db-client',
  'redis',
  'nodemailer',
  'openid-client',
  'jose',
  '@modelcontextprotocol/sdk',
  'pino',
  // The OpenTelemetry SDK and exporters (infra/telemetry); instrumented code imports only @opentelemetry/api, through lib/tracing.ts.
  '@opentelemetry/sdk-trace',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/exporter-trace-otlp-http',
];

/** Node built-ins `domain/` may import; empty on purpose (see above). */
export const DOMAIN_PURE_NODE_MODULES: readonly string[] = [];

export function layerOf(file: string): Layer {
  const p = file.split(sep).join('/');
  for (const folder of SOURCE_FOLDERS) if (p.startsWith(`${folder}/`)) return folder;
  return 'outside';
}

function listTsFiles(root: string, folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name);
      const stat = statSync(full, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      if (stat.isDirectory()) walk(full);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
    }
  };
  walk(dir);
  return out;
}

export function sourceFiles(root: string): string[] {
  return SOURCE_FOLDERS.flatMap((f) => listTsFiles(root, f)).map((f) => toRel(root, f));
}

function toRel(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

/** Top-level folders holding `.ts` files that are neither a source folder nor named as outside. */
export function unclassifiedFolders(root: string): string[] {
  const known = new Set<string>([...SOURCE_FOLDERS, ...OUTSIDE_FOLDERS]);
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('.') && d.name !== 'node_modules' && d.name !== 'dist' && d.name !== 'data')
    .map((d) => d.name)
    .filter((name) => !known.has(name) && listTsFiles(root, name).length > 0)
    .sort();
}

/** NodeNext-style resolution: `./x.js` → `./x.ts`; also extensionless and directory `index.ts`. */
export function resolveSpecifier(root: string, importer: string, specifier: string): string | undefined {
  const base = resolve(root, dirname(importer), specifier);
  const candidates: string[] = [];
  if (/\.(m|c)?js$/.test(base)) candidates.push(base.replace(/\.(m|c)?js$/, (m) => m.replace('js', 'ts')));
  candidates.push(base, `${base}.ts`, join(base, 'index.ts'));
  if (/\.(m|c)?js$/.test(base)) candidates.push(join(base.replace(/\.(m|c)?js$/, ''), 'index.ts'));
  for (const c of candidates) if (existsSync(c) && statSync(c).isFile()) return toRel(root, c);
  return undefined;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  if (!bindings || !ts.isNamedImports(bindings)) return false; // namespace import is a value
  return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function isTypeOnlyExport(node: ts.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  if (!clause || !ts.isNamedExports(clause)) return false; // `export *` re-exports values
  return clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** Every import, re-export, dynamic `import()` and `typeof import()` of one file. */
export function importsOf(root: string, file: string): ImportEdge[] {
  const text = readFileSync(join(root, file), 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (node: ts.Node, spec: ts.Expression | undefined, kind: ImportKind, typeOnly: boolean): void => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const specifier = spec.text;
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    const relativeSpec = specifier.startsWith('./') || specifier.startsWith('../');
    const target = relativeSpec ? resolveSpecifier(root, file, specifier) : undefined;
    edges.push({ file, line, specifier, kind, typeOnly, target, unresolved: relativeSpec && !target });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, 'import', isTypeOnlyImport(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add(node, node.moduleSpecifier, 'export', isTypeOnlyExport(node));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, 'import-equals', node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], 'dynamic', false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal as ts.Expression, 'import-type-node', true);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return edges;
}

export function collectImports(root: string): ImportEdge[] {
  // a file moved away between listing and reading (another writer in the tree) is simply not there
  return sourceFiles(root).flatMap((f) => (existsSync(join(root, f)) ? importsOf(root, f) : []));
}

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function isNodeBuiltin(specifier: string): boolean {
  if (specifier.startsWith('node:')) return true;
  return builtinModules.includes(packageName(specifier));
}

/** The violations of one edge (zero or one). */
export function checkEdge(edge: ImportEdge): Violation | undefined {
  const importerLayer = layerOf(edge.file);
  if (importerLayer === 'outside') return undefined;
  const relativeSpec = edge.specifier.startsWith('./') || edge.specifier.startsWith('../');
  if (!relativeSpec) {
    const pkg = packageName(edge.specifier);
    if (ADAPTER_PACKAGES.includes(pkg) && importerLayer !== 'infra' && importerLayer !== 'app') {
      return { edge, importerLayer, targetDescription: pkg, rule: 'adapter packages are imported in infra/ only, behind a port' };
    }
    if (importerLayer !== 'domain') return undefined;
    if (isNodeBuiltin(edge.specifier)) {
      const name = edge.specifier.startsWith('node:') ? edge.specifier : `node:${edge.specifier}`;
      if (DOMAIN_PURE_NODE_MODULES.includes(name)) return undefined;
      return { edge, importerLayer, targetDescription: name, rule: 'domain/ is pure: no node: modules' };
    }
    if (DOMAIN_PURE_PACKAGES.includes(pkg)) return undefined;
    return {
      edge,
      importerLayer,
      targetDescription: pkg,
      rule: `domain/ is pure: only packages judged pure (${DOMAIN_PURE_PACKAGES.join(', ')})`,
    };
  }
  if (!edge.target) {
    return { edge, importerLayer, targetDescription: edge.specifier, rule: 'relative import resolves to no file' };
  }
  const targetLayer = layerOf(edge.target);
  if (targetLayer === 'app' && importerLayer !== 'app') {
    return { edge, importerLayer, targetDescription: 'app/', rule: 'only app/ (the composition root) imports app/' };
  }
  const allowed = ALLOWED[importerLayer];
  if (allowed === 'any' || allowed.includes(targetLayer)) return undefined;
  const targetDescription = targetLayer === 'outside' ? edge.target : `${targetLayer}/`;
  return { edge, importerLayer, targetDescription, rule: RULE_TEXT[importerLayer] };
}

export function checkRules(edges: readonly ImportEdge[]): Violation[] {
  return edges.map(checkEdge).filter((v): v is Violation => v !== undefined);
}

export function formatViolation(v: Violation): string {
  const typeNote = v.edge.typeOnly ? ' [type-only]' : '';
  return `${v.edge.file}:${v.edge.line}  ${v.importerLayer}/ → ${v.edge.target ?? v.targetDescription}${typeNote}  (rule: ${v.rule})`;
}

/** One strongly connected component: a concrete cycle through it (first file repeated last), and all its files. */
export interface Cycle {
  readonly path: readonly string[];
  readonly members: readonly string[];
}

/**
 * Cycles among source files over value edges (type-only imports are erased at compile time, so they
 * cannot make a module-initialisation cycle); one per strongly connected component.
 */
export function findCycles(edges: readonly ImportEdge[]): Cycle[] {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    if (e.typeOnly || !e.target) continue;
    if (!graph.has(e.file)) graph.set(e.file, new Set());
    graph.get(e.file)!.add(e.target);
    if (!graph.has(e.target)) graph.set(e.target, new Set());
  }
  const nodes = [...graph.keys()].sort();
  // Tarjan's strongly connected components, iterative so a deep import chain cannot overflow the stack.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of nodes) {
    if (idx.has(start)) continue;
    const work: Array<{ node: string; next: string[] }> = [];
    const open = (n: string): void => {
      idx.set(n, index);
      low.set(n, index);
      index += 1;
      stack.push(n);
      onStack.add(n);
      work.push({ node: n, next: [...graph.get(n)!].sort() });
    };
    open(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const child = frame.next.shift();
      if (child !== undefined) {
        if (!idx.has(child)) open(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, idx.get(child)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === idx.get(frame.node)) {
        const comp: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          comp.push(n);
        } while (n !== frame.node);
        const selfLoop = graph.get(frame.node)!.has(frame.node);
        if (comp.length > 1 || selfLoop) components.push(comp.sort());
      }
    }
  }
  return components.map((members) => ({ members, path: shortestCycle(graph, members) }));
}

/** Shortest cycle through the first member of a component (breadth-first within the component). */
function shortestCycle(graph: Map<string, Set<string>>, members: readonly string[]): string[] {
  const inComp = new Set(members);
  const start = members[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const m of [...graph.get(n)!].sort()) {
      if (!inComp.has(m)) continue;
      if (m === start) {
        const path = [start];
        for (let c = n; c !== start; c = prev.get(c)!) path.splice(1, 0, c);
        return [...path, start];
      }
      if (!seen.has(m)) {
        seen.add(m);
        prev.set(m, n);
        queue.push(m);
      }
    }
  }
  return [start, start];
}

export function formatCycle(c: Cycle): string {
  const others = c.members.length > c.path.length - 1 ? `  (component of ${c.members.length}: ${c.members.join(', ')})` : '';
  return `${c.path.join(' → ')}${others}`;
}
