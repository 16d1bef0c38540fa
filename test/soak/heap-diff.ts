/**
 * `npx tsx test/soak/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [top]`
 *
 * What grew between two heap snapshots (the soak writes them with HEAP_PROBE_SNAPSHOT_DIR): live
 * objects counted and summed by type and constructor name, largest growth first.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function totals(path: string): Map<string, { count: number; bytes: number }> {
  const s = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const types = s.snapshot.meta.node_types[0];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]];
    // Strings are keyed by type only: their text would make one key per value.
    const key = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? `(${type})` : `${type} ${s.strings[s.nodes[i + nameAt]].slice(0, 60)}`;
    const t = out.get(key) ?? { count: 0, bytes: 0 };
    t.count++;
    t.bytes += s.nodes[i + sizeAt];
    out.set(key, t);
  }
  return out;
}

const [beforePath, afterPath, topArg] = process.argv.slice(2);
if (!beforePath || !afterPath) {
  console.error('usage: heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [top]');
  process.exit(2);
}
const before = totals(beforePath);
const after = totals(afterPath);
const rows = [...after].map(([key, a]) => {
  const b = before.get(key) ?? { count: 0, bytes: 0 };
  return { key, count: a.count - b.count, bytes: a.bytes - b.bytes, total: a.bytes };
});
rows.sort((x, y) => y.bytes - x.bytes);
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`grown in total: ${kib(rows.reduce((n, r) => n + r.bytes, 0))}`);
for (const r of rows.slice(0, Number(topArg ?? 30))) console.log(`${kib(r.bytes).padStart(10)} ${String(r.count).padStart(8)} objects  ${r.key}  (now ${kib(r.total)})`);
