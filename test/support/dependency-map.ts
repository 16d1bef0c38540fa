// The README's "Where things are" table, checked against the tree: every file it names exists, every
// file of the per-context layers belongs to a context by its name and is named in that context's row,
// so the map a newcomer reads stays true.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders whose files are named `<ctx>.ts`, `<ctx>-<part>.ts` or `<ctx>-<dir>/`. */
export const CONTEXT_FOLDERS = ['commands', 'projections', 'consumers', 'api/routes'] as const;
export type ContextFolder = (typeof CONTEXT_FOLDERS)[number];

/** Files that serve every context, so belong to none; each with the reason. */
export const SHARED_FILES: Readonly<Record<string, string>> = {
  'commands/handle.ts': 'the load–decide–append loop every command handler runs',
  'commands/stream-writers.ts': 'the per-stream queue that loop runs in (one writer per stream per process)',
  'commands/snapshots.ts': 'snapshots of long streams that loop and time travel fold from (any decider with a stateVersion)',
  'projections/index.ts': 'the list of all projectors the runner feeds',
  'projections/projector.ts': 'the projector type and helpers every projection uses',
  'projections/folded-docs.ts': 'one document per stream holding its folded state, written once per batch (runs, workflows)',
  'consumers/index.ts': 'the list of all consumers the worker role starts',
  'consumers/traced.ts': 'runs any consumer inside the trace its event names (tracing, every context)',
  'api/routes/index.ts': 'the route table that mounts every router',
  'api/routes/health.ts': 'liveness and readiness of the process, not of a context',
  'api/routes/pagination.ts': 'the `limit`/`cursor` schema every list route uses',
};

/** Entries of `domain/` that belong to no context, each with the reason. */
export const SHARED_DOMAIN_ENTRIES: Readonly<Record<string, string>> = {
  'domain/shared': 'the decider type, event envelope, permissions and principal all contexts share',
  'domain/upcasters.ts': 'the registry of every context’s upcasters, read by the event store',
  'domain/retention.ts': 'the retention policy of every stream category, read by the event store',
};

export interface MapRow {
  readonly context: string;
  readonly line: number;
  /** `domain/<ctx>/` or undefined for `—` */
  readonly domain?: string;
  /** per folder, the names listed (relative to the folder) */
  readonly files: Readonly<Record<ContextFolder, readonly string[]>>;
}

const HEADING = '### Where things are';

/** Parse the table of the "Where things are" subsection: context | domain | commands | projections | consumers | api/routes. */
export function parseMap(readme: string): MapRow[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.trim() === HEADING);
  if (start < 0) throw new Error(`README has no "${HEADING}" subsection`);
  const rows: MapRow[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (line.startsWith('#')) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split('|').map((c) => c.trim());
    if (!inTable) {
      inTable = true; // header row
      continue;
    }
    if (/^:?-+:?$/.test(cells[0] ?? '')) continue; // separator row
    if (cells.length !== 6) throw new Error(`README line ${i + 1}: expected 6 cells, found ${cells.length}`);
    const names = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const [context, domain, commands, projections, consumers, routes] = cells as [string, string, string, string, string, string];
    rows.push({
      context: names(context)[0] ?? context,
      line: i + 1,
      domain: names(domain)[0],
      files: {
        commands: names(commands),
        projections: names(projections),
        consumers: names(consumers),
        'api/routes': names(routes),
      },
    });
  }
  if (rows.length === 0) throw new Error(`README "${HEADING}" has no table rows`);
  return rows;
}

/** The context a file or directory name belongs to: the longest context `c` with name `c` or `c-…`. */
export function contextOf(name: string, contexts: readonly string[]): string | undefined {
  const stem = name.replace(/\/$/, '').replace(/\.ts$/, '');
  return [...contexts]
    .sort((a, b) => b.length - a.length)
    .find((c) => stem === c || stem.startsWith(`${c}-`));
}

/** Top-level entries of a context folder: `x.ts` files and `x/` directories. */
function entriesOf(root: string, folder: string): string[] {
  const dir = join(root, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const isDir = statSync(join(dir, name)).isDirectory();
      if (isDir) return [`${name}/`];
      return name.endsWith('.ts') ? [name] : [];
    });
}

/** Every way the map and the tree disagree, as readable lines. */
export function checkMap(
  root: string,
  readme: string,
  shared: Readonly<Record<string, string>> = SHARED_FILES,
  sharedDomain: Readonly<Record<string, string>> = SHARED_DOMAIN_ENTRIES,
): string[] {
  const rows = parseMap(readme);
  const problems: string[] = [];
  const contexts = rows.map((r) => r.context);
  const byContext = new Map(rows.map((r) => [r.context, r]));
  for (const row of rows) {
    if (row.domain !== undefined) {
      const dir = row.domain.replace(/\/$/, '');
      if (!existsSync(join(root, dir)) || !statSync(join(root, dir)).isDirectory()) {
        problems.push(`README:${row.line}  ${row.context}: ${row.domain} does not exist`);
      } else if (dir !== `domain/${row.context}`) {
        problems.push(`README:${row.line}  ${row.context}: domain entry ${row.domain} is not domain/${row.context}/`);
      }
    }
    for (const folder of CONTEXT_FOLDERS) {
      for (const name of row.files[folder]) {
        const path = join(root, folder, name.replace(/\/$/, ''));
        if (!existsSync(path)) problems.push(`README:${row.line}  ${row.context}: ${folder}/${name} does not exist`);
        else if (contextOf(name, contexts) !== row.context) {
          problems.push(`README:${row.line}  ${row.context}: ${folder}/${name} is named for context ${contextOf(name, contexts) ?? '(none)'}`);
        }
      }
    }
  }
  for (const folder of CONTEXT_FOLDERS) {
    for (const name of entriesOf(root, folder)) {
      const path = `${folder}/${name}`;
      if (shared[path] !== undefined) continue;
      const ctx = contextOf(name, contexts);
      if (ctx === undefined) {
        problems.push(`${path} belongs to no context (name it <ctx>.ts or <ctx>-<part>.ts, or add it to SHARED_FILES with a reason)`);
      } else if (!byContext.get(ctx)!.files[folder].includes(name)) {
        problems.push(`${path} is not named in the README map row "${ctx}" (column ${folder})`);
      }
    }
  }
  for (const name of entriesOf(root, 'domain')) {
    const path = `domain/${name.replace(/\/$/, '')}`;
    if (sharedDomain[path] !== undefined) continue;
    const row = byContext.get(name.replace(/\/$/, ''));
    if (!name.endsWith('/') || row === undefined) {
      problems.push(`${path} is neither a context of the README map nor a shared domain entry`);
    } else if (row.domain === undefined) {
      problems.push(`${path}/ exists but the README map row "${row.context}" says —`);
    }
  }
  for (const path of [...Object.keys(shared), ...Object.keys(sharedDomain)]) {
    if (!existsSync(join(root, path))) problems.push(`shared entry ${path} does not exist (remove it from the list)`);
  }
  return problems;
}

/** The table as the tree has it, for the contexts given: what to paste into the README when the map is stale. */
export function renderMap(
  root: string,
  contexts: readonly string[],
  shared: Readonly<Record<string, string>> = SHARED_FILES,
): string {
  const rows = contexts.map((c) => {
    const cells = [`\`${c}\``, existsSync(join(root, 'domain', c)) ? `\`domain/${c}/\`` : '—'];
    for (const folder of CONTEXT_FOLDERS) {
      const names = entriesOf(root, folder).filter((n) => shared[`${folder}/${n}`] === undefined && contextOf(n, contexts) === c);
      // the context's own file first, then its parts in name order
      names.sort((a, b) => (a === `${c}.ts` ? -1 : b === `${c}.ts` ? 1 : a.localeCompare(b)));
      cells.push(names.length > 0 ? names.map((n) => `\`${n}\``).join(', ') : '—');
    }
    return `| ${cells.join(' | ')} |`;
  });
  return ['| context | `domain/` | `commands/` | `projections/` | `consumers/` | `api/routes/` |', '|---|---|---|---|---|---|', ...rows].join('\n');
}
