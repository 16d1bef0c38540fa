// DESIGN §2 enforced: the dependency rule, no import cycles, an allowlist that cannot go stale, and the
// README's "Where things are" map kept true; plus tests of the checkers on small fixture trees.
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALLOWED_EDGES, excuses } from '../support/dependency-allowlist.js';
import { checkMap, parseMap, renderMap } from '../support/dependency-map.js';
import {
  checkRules,
  collectImports,
  findCycles,
  formatCycle,
  formatViolation,
  importsOf,
  type ImportEdge,
  type Violation,
  unclassifiedFolders,
} from '../support/dependency-rules.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'architecture-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('architecture: the dependency rule of DESIGN §2', () => {
  let edges: ImportEdge[];
  let violations: Violation[];

  before(() => {
    edges = collectImports(ROOT);
    violations = checkRules(edges);
  });

  it('reads the imports of every source folder', () => {
    for (const folder of ['domain/', 'lib/', 'commands/', 'projections/', 'consumers/', 'api/', 'ports/', 'infra/', 'app/']) {
      expect(edges.some((e) => e.file.startsWith(folder)), folder).to.equal(true);
    }
  });

  it('no forbidden import', () => {
    const left = violations.filter((v) => !ALLOWED_EDGES.some((a) => excuses(a, v)));
    if (left.length > 0) expect.fail(`${left.length} forbidden import(s):\n${left.map(formatViolation).join('\n')}`);
  });

  it('no import cycles (type-only imports excepted)', () => {
    const cycles = findCycles(edges);
    if (cycles.length > 0) expect.fail(`${cycles.length} import cycle(s):\n${cycles.map(formatCycle).join('\n')}`);
  });

  it('the allowlist has no stale entries, and each says why', () => {
    const stale = ALLOWED_EDGES.filter((a) => !violations.some((v) => excuses(a, v)));
    if (stale.length > 0) {
      expect.fail(`allowlist entries that match no violation (remove them):\n${stale.map((a) => `${a.importer} → ${a.target}`).join('\n')}`);
    }
    for (const a of ALLOWED_EDGES) expect(a.reason.trim().length, `${a.importer} → ${a.target}: reason`).to.be.greaterThan(20);
  });

  it('the README map of contexts matches the tree', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const problems = checkMap(ROOT, readme);
    const table = problems.length > 0 ? `\n\nthe table as the tree has it now:\n${renderMap(ROOT, parseMap(readme).map((r) => r.context))}\n` : '';
    if (problems.length > 0) expect.fail(`${problems.length} README map problem(s):\n${problems.join('\n')}${table}`);
  });
});

describe('architecture: the checker itself, on fixture trees', () => {
  const roots: string[] = [];
  const tree = (files: Record<string, string>): string => {
    const root = writeTree(files);
    roots.push(root);
    return root;
  };
  after(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('fails on a forbidden import, naming file, line and rule', () => {
    const root = tree({
      'domain/x.ts': "import { z } from 'zod';\n\nimport { y } from '../infra/y.js';\nexport const x = y;\n",
      'infra/y.ts': 'export const y = 1;\n',
      'api/routes/a.ts': "import { b } from '../../consumers/b.js';\nexport const a = b;\n",
      'consumers/b.ts': 'export const b = 1;\n',
      'consumers/c.ts': "import { p } from '../projections/p.js';\nexport const c = p;\n",
      'projections/p.ts': 'export const p = 1;\n',
      'commands/k.ts': "import { Store } from '../infra/read-store/memory.js';\nexport type K = Store;\n",
      'infra/read-store/memory.ts': 'export class Store {}\n',
    });
    const found = checkRules(collectImports(root)).map(formatViolation);
    expect(found).to.have.members([
      'domain/x.ts:3  domain/ → infra/y.ts  (rule: domain/ imports domain/ only)',
      'api/routes/a.ts:1  api/ → consumers/b.ts  (rule: api/ imports domain/, lib/, commands/, projections/, ports/, api/ (no consumers/, no concrete adapters))',
      'consumers/c.ts:1  consumers/ → projections/p.ts  (rule: consumers/ imports domain/, lib/, commands/, ports/, consumers/ (read models through a port))',
      'commands/k.ts:1  commands/ → infra/read-store/memory.ts  (rule: commands/ imports domain/, lib/, ports/, commands/)',
    ]);
  });

  it('counts a type-only import of a concrete adapter as a violation', () => {
    const root = tree({
      'commands/k.ts': "import type { Store } from '../infra/read-store/memory.js';\nexport type K = Store;\n",
      'infra/read-store/memory.ts': 'export class Store {}\n',
    });
    const found = checkRules(collectImports(root));
    expect(found).to.have.length(1);
    expect(found[0]!.edge.typeOnly).to.equal(true);
    expect(formatViolation(found[0]!)).to.contain('[type-only]');
  });

  it('allows what the table allows', () => {
    const root = tree({
      'domain/d.ts': "import { z } from 'zod';\nexport const d = z.string();\n",
      'ports/p.ts': "import type { d } from '../domain/d.js';\nexport type P = typeof d;\n",
      'lib/sleep.ts': 'export const sleep = 1;\n',
      'commands/c.ts': "import { d } from '../domain/d.js';\nimport type { P } from '../ports/p.js';\nimport { sleep } from '../lib/sleep.js';\nexport const c = [d, sleep];\n",
      'infra/bus/x.ts': "import type { P } from '../../ports/p.js';\nimport { sleep } from '../../lib/sleep.js';\nimport { Kafka } from 'kafkajs';\nexport const x = [sleep, Kafka];\nexport type X = P;\n",
      'projections/q.ts': "import { d } from '../domain/d.js';\nexport const q = d;\n",
      'consumers/r.ts': "import { c } from '../commands/c.js';\nexport const r = c;\n",
      'api/routes/a.ts': "import { c } from '../../commands/c.js';\nimport { q } from '../../projections/q.js';\nimport Koa from 'koa';\nexport const a = [c, q, Koa];\n",
      'app/container.ts': "import { r } from '../consumers/r.js';\nimport { a } from '../api/routes/a.js';\nexport const all = [r, a];\n",
    });
    expect(checkRules(collectImports(root)).map(formatViolation)).to.deep.equal([]);
  });

  it('keeps adapters in their room: infra/ importing commands, projections, consumers, api or app fails', () => {
    const root = tree({
      'infra/bus/a.ts': "import { c } from '../../commands/c.js';\nexport const a = c;\n",
      'infra/bus/b.ts': "import type { P } from '../../projections/p.js';\nexport type B = P;\n",
      'infra/kv/c.ts': "import { k } from '../../consumers/k.js';\nexport const c = k;\n",
      'infra/kv/d.ts': "import { r } from '../../api/r.js';\nexport const d = r;\n",
      'infra/kv/e.ts': "import { main } from '../../app/main.js';\nexport const e = main;\n",
      'commands/c.ts': 'export const c = 1;\n',
      'projections/p.ts': 'export type P = 1;\n',
      'consumers/k.ts': 'export const k = 1;\n',
      'api/r.ts': 'export const r = 1;\n',
      'app/main.ts': 'export const main = 1;\n',
    });
    const found = checkRules(collectImports(root)).map(formatViolation);
    const rule = 'infra/ (adapters) imports domain/, lib/, ports/, infra/ (the composition root in app/ wires them to the rest)';
    expect(found).to.have.members([
      `infra/bus/a.ts:1  infra/ → commands/c.ts  (rule: ${rule})`,
      `infra/bus/b.ts:1  infra/ → projections/p.ts [type-only]  (rule: ${rule})`,
      `infra/kv/c.ts:1  infra/ → consumers/k.ts  (rule: ${rule})`,
      `infra/kv/d.ts:1  infra/ → api/r.ts  (rule: ${rule})`,
      'infra/kv/e.ts:1  infra/ → app/main.ts  (rule: only app/ (the composition root) imports app/)',
    ]);
  });

  it('only app/ imports app/; ports/ import no adapter; lib/ imports nothing of ours', () => {
    const root = tree({
      'app/main.ts': "import { container } from './container.js';\nexport const main = container;\n",
      'app/container.ts': 'export const container = 1;\n',
      'api/routes/a.ts': "import { container } from '../../app/container.js';\nexport const a = container;\n",
      'commands/c.ts': "import type { container } from '../app/container.js';\nexport type C = typeof container;\n",
      'ports/p.ts': "import type { Store } from '../infra/read-store/memory.js';\nexport type P = Store;\n",
      'infra/read-store/memory.ts': 'export class Store {}\n',
      'lib/l.ts': "import { d } from '../domain/d.js';\nexport const l = d;\n",
      'domain/d.ts': 'export const d = 1;\n',
    });
    expect(checkRules(collectImports(root)).map((v) => `${v.edge.file} ${v.rule}`)).to.have.members([
      'api/routes/a.ts only app/ (the composition root) imports app/',
      'commands/c.ts only app/ (the composition root) imports app/',
      'ports/p.ts ports/ imports domain/, ports/',
      'lib/l.ts lib/ imports lib/ only',
    ]);
  });

  it('names every top-level folder holding TypeScript as a source folder or as outside', () => {
    const root = tree({ 'domain/d.ts': '', 'test/t.ts': '', 'newroom/x.ts': '', 'assets/readme.md': '' });
    expect(unclassifiedFolders(root)).to.deep.equal(['newroom']);
    expect(unclassifiedFolders(ROOT), 'this repository').to.deep.equal([]);
  });

  it('keeps domain/ pure: no node: modules, no package not judged pure', () => {
    const root = tree({
      'domain/a.ts': "import { randomUUID } from 'node:crypto';\nexport const a = randomUUID;\n",
      'domain/b.ts': "import { readFileSync } from 'fs';\nexport const b = readFileSync;\n",
      'domain/c.ts': "import { MongoClient } from 'mongodb';\nexport const c = MongoClient;\n",
      'domain/d.ts': "import { z } from 'zod';\nexport const d = z;\n",
    });
    const found = checkRules(collectImports(root)).map((v) => `${v.edge.file} ${v.targetDescription}`);
    expect(found).to.have.members(['domain/a.ts node:crypto', 'domain/b.ts node:fs', 'domain/c.ts mongodb']);
  });

  it('keeps adapter packages in infra/: a handler, projector, consumer, route or port may not import a driver', () => {
    const root = tree({
      'commands/a.ts': "import type { Db } from 'mongodb';\nexport type A = Db;\n",
      'projections/b.ts': "import Database from 'better-sqlite3';\nexport const b = Database;\n",
      'consumers/c.ts': "import { Kafka } from 'kafkajs';\nexport const c = Kafka;\n",
      'api/d.ts': "import { Client } from '@modelcontextprotocol/sdk/client/index.js';\nexport const d = Client;\n",
      'ports/e.ts': "import type { Logger } from 'pino';\nexport type E = Logger;\n",
      'infra/read-store/mongo.ts': "import { MongoClient } from 'mongodb';\nexport const m = MongoClient;\n",
    });
    const found = checkRules(collectImports(root)).map((v) => `${v.edge.file} ${v.targetDescription}`);
    expect(found).to.have.members([
      'commands/a.ts mongodb',
      'projections/b.ts better-sqlite3',
      'consumers/c.ts kafkajs',
      'api/d.ts @modelcontextprotocol/sdk',
      'ports/e.ts pino',
    ]);
  });

  it('an allowlist entry excuses only its edge, and a type-only entry only a type-only import', () => {
    const root = tree({
      'ports/a.ts': "import type { Config } from '../infra/config/index.js';\nexport type A = Config;\n",
      'ports/b.ts': "import { loadConfig } from '../infra/config/index.js';\nexport const b = loadConfig;\n",
      'ports/c.ts': "import type { Other } from '../infra/other.js';\nexport type C = Other;\n",
      'infra/config/index.ts': 'export type Config = {}; export const loadConfig = () => ({});\n',
      'infra/other.ts': 'export type Other = {};\n',
    });
    const entry = { importer: 'ports/', target: 'infra/config/index.ts', typeOnly: true, reason: 'the Config shape' };
    const left = checkRules(collectImports(root)).filter((v) => !excuses(entry, v));
    expect(left.map((v) => v.edge.file)).to.deep.equal(['ports/b.ts', 'ports/c.ts']);
  });

  it('does not take an import in a comment or a string for one', () => {
    const root = tree({
      'domain/x.ts': [
        "// import { y } from '../infra/y.js';",
        "/* export * from '../infra/y.js'; */",
        "export const text = \"import { y } from '../infra/y.js'\";",
        "export const tpl = `await import('../infra/y.js')`;",
        '',
      ].join('\n'),
      'infra/y.ts': 'export const y = 1;\n',
    });
    expect(collectImports(root)).to.deep.equal([]);
  });

  it('sees re-exports, dynamic import() and typeof import(), and marks which are type-only', () => {
    const root = tree({
      'commands/a.ts': [
        "import type { T } from './t.js';",
        "import { type U, type V } from './t.js';",
        "import { type W, w } from './t.js';",
        "import './t.js';",
        "import * as ns from './t.js';",
        "export { w as w2 } from './t.js';",
        "export type { T as T2 } from './t.js';",
        "export * from './t.js';",
        "export const lazy = () => import('./t.js');",
        "export type Lazy = typeof import('./t.js');",
        'export const used = [ns, w];',
        '',
      ].join('\n'),
      'commands/t.ts': 'export type T = 1; export type U = 1; export type V = 1; export type W = 1; export const w = 1;\n',
    });
    const seen = importsOf(root, 'commands/a.ts').map((e) => `${e.line} ${e.kind} ${e.typeOnly ? 'type' : 'value'} ${e.target}`);
    expect(seen).to.deep.equal([
      '1 import type commands/t.ts',
      '2 import type commands/t.ts',
      '3 import value commands/t.ts',
      '4 import value commands/t.ts',
      '5 import value commands/t.ts',
      '6 export value commands/t.ts',
      '7 export type commands/t.ts',
      '8 export value commands/t.ts',
      '9 dynamic value commands/t.ts',
      '10 import-type-node type commands/t.ts',
    ]);
  });

  it('resolves .js specifiers to .ts files and directories to their index.ts', () => {
    const root = tree({
      'api/a.ts': [
        "import { b } from './b.js';",
        "import { c } from '../domain/c/index.js';",
        "import { c2 } from '../domain/c';",
        "import { missing } from './missing.js';",
        'export const a = [b, c, c2, missing];',
        '',
      ].join('\n'),
      'api/b.ts': 'export const b = 1;\n',
      'domain/c/index.ts': 'export const c = 1; export const c2 = 2;\n',
    });
    const targets = importsOf(root, 'api/a.ts').map((e) => e.target ?? `unresolved ${e.specifier}`);
    expect(targets).to.deep.equal(['api/b.ts', 'domain/c/index.ts', 'domain/c/index.ts', 'unresolved ./missing.js']);
    expect(checkRules(collectImports(root)).map((v) => v.rule)).to.deep.equal(['relative import resolves to no file']);
  });

  it('ignores a cycle made only through type-only imports', () => {
    const root = tree({
      'commands/a.ts': "import type { B } from './b.js';\nexport const a = 1; export type A = B;\n",
      'commands/b.ts': "import { a } from './a.js';\nexport const b = a; export type B = number;\n",
    });
    expect(findCycles(collectImports(root))).to.deep.equal([]);
  });

  it('reports a value cycle, with its path', () => {
    const root = tree({
      'commands/orgs.ts': "import { inv } from './orgs-invitations.js';\nexport const orgs = () => inv;\n",
      'commands/orgs-invitations.ts': "import { orgs } from './orgs.js';\nexport const inv = () => orgs;\n",
      'commands/x.ts': "import { y } from './y.js';\nexport const x = () => y;\n",
      'commands/y.ts': "import { z } from './z.js';\nexport const y = () => z;\n",
      'commands/z.ts': "export { x as z } from './x.js';\n",
      'commands/self.ts': "import * as me from './self.js';\nexport const self = me;\n",
    });
    expect(findCycles(collectImports(root)).map(formatCycle)).to.have.members([
      'commands/orgs-invitations.ts → commands/orgs.ts → commands/orgs-invitations.ts',
      'commands/x.ts → commands/y.ts → commands/z.ts → commands/x.ts',
      'commands/self.ts → commands/self.ts',
    ]);
  });
});

describe('architecture: the README map checker, on a fixture tree', () => {
  const readme = (rows: string[]): string =>
    [
      '## Design',
      '',
      '### Where things are',
      '',
      '| context | domain | commands | projections | consumers | api/routes |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      '### Ports and adapters',
      '',
      '| port | embedded |',
      '|---|---|',
      '| x | y |',
      '',
    ].join('\n');
  const files = {
    'domain/flows/index.ts': '',
    'domain/shared/decider.ts': '',
    'commands/flows.ts': '',
    'commands/handle.ts': '',
    'projections/flows.ts': '',
    'consumers/runs-kinds/index.ts': '',
    'api/routes/flows.ts': '',
    'api/routes/flows-nodes.ts': '',
    'api/routes/runs.ts': '',
  };
  const shared = { 'commands/handle.ts': 'the handler loop' };
  const sharedDomain = { 'domain/shared': 'shared kernel' };
  let root: string;
  before(() => {
    root = writeTree(files);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('passes when every context file is named and exists', () => {
    const text = readme([
      '| flows | `domain/flows/` | `flows.ts` | `flows.ts` | — | `flows.ts`, `flows-nodes.ts` |',
      '| runs | — | — | — | `runs-kinds/` | `runs.ts` |',
    ]);
    expect(checkMap(root, text, shared, sharedDomain)).to.deep.equal([]);
  });

  it('fails when a context named there lacks one of its files, or a file belongs to no context', () => {
    writeFileSync(join(root, 'api/routes/stray.ts'), '');
    try {
      const text = readme([
        '| flows | `domain/flows/` | `flows.ts` | `flows.ts`, `flows-gone.ts` | — | `flows.ts` |',
        '| runs | `domain/runs/` | — | — | `runs-kinds/` | `runs.ts` |',
      ]);
      expect(checkMap(root, text, shared, sharedDomain)).to.have.members([
        'README:7  flows: projections/flows-gone.ts does not exist',
        'README:8  runs: domain/runs/ does not exist',
        'api/routes/flows-nodes.ts is not named in the README map row "flows" (column api/routes)',
        'api/routes/stray.ts belongs to no context (name it <ctx>.ts or <ctx>-<part>.ts, or add it to SHARED_FILES with a reason)',
      ]);
    } finally {
      rmSync(join(root, 'api/routes/stray.ts'));
    }
  });

  it('renders the table the tree has, which the checker then accepts', () => {
    const table = renderMap(root, ['flows', 'runs'], shared);
    expect(table.split('\n').slice(2)).to.deep.equal([
      '| `flows` | `domain/flows/` | `flows.ts` | `flows.ts` | — | `flows.ts`, `flows-nodes.ts` |',
      '| `runs` | — | — | — | `runs-kinds/` | `runs.ts` |',
    ]);
    const text = `### Where things are\n\n${table}\n`;
    expect(checkMap(root, text, shared, sharedDomain)).to.deep.equal([]);
  });

  it('assigns a file to the longest context its name starts with', () => {
    const text = readme([
      '| flows | `domain/flows/` | `flows.ts` | `flows.ts` | — | `flows.ts` |',
      '| flows-nodes | — | — | — | — | `flows-nodes.ts` |',
      '| runs | — | — | — | `runs-kinds/` | `runs.ts` |',
    ]);
    expect(checkMap(root, text, shared, sharedDomain)).to.deep.equal([]);
  });
});
