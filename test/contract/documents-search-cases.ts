/**
 * The cross-store search table: generated documents (fixed seed) and filters, each with its
 * expected answer computed by a plain JavaScript predicate written from MongoDB's documented
 * semantics, independently of mingo and of the servers.
 */
type Doc = Record<string, any>;

function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'Alice', 'bravo', 'banana', 'charlie', 'delta', 'Echo', 'anchor', 'zulu', 'mango', 'Andes', 'tango'];
const CITIES = ['Paris', 'Berlin', 'Oslo', 'Lima', 'paris'];
const TAGS = ['a', 'b', 'c', 'd', 'e'];

export function generateDocuments(count = 300, seed = 20261121): Doc[] {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const docs: Doc[] = [];
  for (let i = 0; i < count; i++) {
    const d: Doc = { _id: `d${String(i).padStart(3, '0')}` };
    if (rnd() < 0.9) d.n = Math.floor(rnd() * 100);
    d.price = Math.round(rnd() * 2000) / 100;
    if (rnd() < 0.85) d.name = `${pick(WORDS)}${rnd() < 0.3 ? ` ${pick(WORDS)}` : ''}`;
    d.status = pick(['open', 'closed', 'draft']);
    const r = rnd();
    if (r < 0.8) d.tags = Array.from({ length: Math.floor(rnd() * 4) }, () => pick(TAGS)).filter((t, j, a) => a.indexOf(t) === j);
    else if (r < 0.9) d.tags = pick(TAGS); // a scalar where others have arrays
    if (rnd() < 0.7) d.scores = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => Math.floor(rnd() * 100));
    const f = rnd();
    if (f < 0.4) d.flag = rnd() < 0.5;
    else if (f < 0.6) d.flag = null;
    const m = rnd();
    if (m < 0.45) d.mixed = Math.floor(rnd() * 30);
    else if (m < 0.9) d.mixed = pick(['k', 'm', 'z', '15']);
    if (rnd() < 0.8) d.nested = { city: pick(CITIES), depth: rnd() < 0.7 ? { level: Math.floor(rnd() * 4) } : {} };
    if (rnd() < 0.5) d.items = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({ sku: pick(['A', 'B', 'C']), qty: Math.floor(rnd() * 6) }));
    docs.push(d);
  }
  return docs;
}

// ---------------------------------------------------------------- MongoDB semantics, by hand

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
/** Field equality: the value, or any element of an array value, equals x; null also matches missing. */
const eq = (v: unknown, x: unknown) => (x === null ? v === undefined || v === null || (Array.isArray(v) && v.includes(null)) : v === x || (Array.isArray(v) && v.includes(x)));
const anyNum = (v: unknown, test: (n: number) => boolean) => arr(v).some((e) => typeof e === 'number' && test(e));
const anyStr = (v: unknown, test: (s: string) => boolean) => arr(v).some((e) => typeof e === 'string' && test(e));
/** `a.b` through arrays of documents, as MongoDB resolves dotted paths. */
const at = (d: Doc, path: string): unknown[] => {
  let cur: unknown[] = [d];
  for (const seg of path.split('.')) {
    const next: unknown[] = [];
    for (const c of cur) {
      if (Array.isArray(c)) {
        if (/^\d+$/.test(seg)) next.push(c[Number(seg)]);
        for (const e of c) if (e && typeof e === 'object' && !Array.isArray(e)) next.push((e as Doc)[seg]);
      } else if (c && typeof c === 'object') next.push((c as Doc)[seg]);
    }
    cur = next;
  }
  return cur.filter((x) => x !== undefined);
};

export interface SearchCase {
  name: string;
  filter: Record<string, unknown>;
  sort?: Record<string, 1 | -1>;
  projection?: Record<string, 0 | 1>;
  expect: (d: Doc) => boolean;
}

export const CASES: SearchCase[] = [
  { name: 'everything', filter: {}, expect: () => true },
  { name: 'scalar equality', filter: { status: 'open' }, expect: (d) => d.status === 'open' },
  { name: 'equality on an array field', filter: { tags: 'b' }, expect: (d) => eq(d.tags, 'b') },
  { name: '$eq', filter: { n: { $eq: 42 } }, expect: (d) => d.n === 42 },
  { name: '$ne includes missing', filter: { n: { $ne: 5 } }, expect: (d) => d.n !== 5 },
  { name: '$gt / $lte range', filter: { n: { $gt: 10, $lte: 20 } }, expect: (d) => typeof d.n === 'number' && d.n > 10 && d.n <= 20 },
  { name: '$lt on floats', filter: { price: { $lt: 5.5 } }, expect: (d) => d.price < 5.5 },
  { name: '$gte on strings', filter: { name: { $gte: 'b' } }, expect: (d) => typeof d.name === 'string' && d.name >= 'b' },
  { name: 'type bracketing: $gt number ignores strings', filter: { mixed: { $gt: 10 } }, expect: (d) => typeof d.mixed === 'number' && d.mixed > 10 },
  { name: 'type bracketing: $lt string ignores numbers', filter: { mixed: { $lt: 'm' } }, expect: (d) => typeof d.mixed === 'string' && d.mixed < 'm' },
  { name: '$in', filter: { n: { $in: [1, 2, 3, 50] } }, expect: (d) => [1, 2, 3, 50].includes(d.n) },
  { name: '$in on arrays', filter: { tags: { $in: ['a', 'e'] } }, expect: (d) => eq(d.tags, 'a') || eq(d.tags, 'e') },
  { name: '$in with null matches missing', filter: { flag: { $in: [true, null] } }, expect: (d) => d.flag === true || d.flag === null || d.flag === undefined },
  { name: '$nin includes missing', filter: { n: { $nin: [1, 2, 3] } }, expect: (d) => ![1, 2, 3].includes(d.n) },
  { name: 'null matches null and missing', filter: { flag: null }, expect: (d) => d.flag === null || d.flag === undefined },
  { name: '$ne null', filter: { flag: { $ne: null } }, expect: (d) => d.flag !== null && d.flag !== undefined },
  { name: '$exists true (null exists)', filter: { flag: { $exists: true } }, expect: (d) => 'flag' in d },
  { name: '$exists false', filter: { flag: { $exists: false } }, expect: (d) => !('flag' in d) },
  { name: 'boolean equality', filter: { flag: true }, expect: (d) => d.flag === true },
  { name: '$ne true', filter: { flag: { $ne: true } }, expect: (d) => d.flag !== true },
  { name: '$type null', filter: { flag: { $type: 'null' } }, expect: (d) => d.flag === null },
  { name: '$type string', filter: { mixed: { $type: 'string' } }, expect: (d) => typeof d.mixed === 'string' },
  { name: '$type number', filter: { mixed: { $type: 'number' } }, expect: (d) => typeof d.mixed === 'number' },
  { name: '$type bool', filter: { flag: { $type: 'bool' } }, expect: (d) => typeof d.flag === 'boolean' },
  { name: '$type object', filter: { nested: { $type: 'object' } }, expect: (d) => d.nested !== undefined },
  { name: '$all', filter: { tags: { $all: ['a', 'b'] } }, expect: (d) => eq(d.tags, 'a') && eq(d.tags, 'b') },
  { name: '$size', filter: { tags: { $size: 2 } }, expect: (d) => Array.isArray(d.tags) && d.tags.length === 2 },
  { name: '$size 0', filter: { tags: { $size: 0 } }, expect: (d) => Array.isArray(d.tags) && d.tags.length === 0 },
  { name: '$elemMatch on scalars', filter: { scores: { $elemMatch: { $gte: 80 } } }, expect: (d) => Array.isArray(d.scores) && d.scores.some((s: number) => s >= 80) },
  { name: '$elemMatch matches arrays only', filter: { tags: { $elemMatch: { $eq: 'a' } } }, expect: (d) => Array.isArray(d.tags) && d.tags.includes('a') },
  { name: 'range on an array: any element', filter: { scores: { $gt: 95 } }, expect: (d) => anyNum(d.scores, (s) => s > 95) },
  { name: '$regex', filter: { name: { $regex: 'an' } }, expect: (d) => anyStr(d.name, (s) => /an/.test(s)) },
  { name: '$regex anchored, case-insensitive', filter: { name: { $regex: '^a', $options: 'i' } }, expect: (d) => anyStr(d.name, (s) => /^a/i.test(s)) },
  { name: '$regex on array elements', filter: { tags: { $regex: '^[ab]$' } }, expect: (d) => anyStr(d.tags, (s) => /^[ab]$/.test(s)) },
  { name: '$not $regex includes missing', filter: { name: { $not: { $regex: '^a' } } }, expect: (d) => !anyStr(d.name, (s) => /^a/.test(s)) },
  { name: '$not $gt includes missing', filter: { n: { $not: { $gt: 50 } } }, expect: (d) => !(typeof d.n === 'number' && d.n > 50) },
  { name: '$and', filter: { $and: [{ status: 'open' }, { n: { $lt: 50 } }] }, expect: (d) => d.status === 'open' && typeof d.n === 'number' && d.n < 50 },
  { name: '$or', filter: { $or: [{ status: 'draft' }, { tags: 'c' }] }, expect: (d) => d.status === 'draft' || eq(d.tags, 'c') },
  { name: '$nor', filter: { $nor: [{ status: 'draft' }, { flag: true }] }, expect: (d) => d.status !== 'draft' && d.flag !== true },
  { name: 'nested logical', filter: { $or: [{ $and: [{ n: { $gte: 90 } }, { status: 'closed' }] }, { $nor: [{ nested: { $exists: true } }] }] }, expect: (d) => (d.n >= 90 && d.status === 'closed') || d.nested === undefined },
  { name: 'dotted path', filter: { 'nested.city': 'Paris' }, expect: (d) => d.nested?.city === 'Paris' },
  { name: 'deep dotted path range', filter: { 'nested.depth.level': { $gte: 2 } }, expect: (d) => typeof d.nested?.depth?.level === 'number' && d.nested.depth.level >= 2 },
  { name: 'dotted path $exists false', filter: { 'nested.depth.level': { $exists: false } }, expect: (d) => d.nested?.depth?.level === undefined },
  { name: 'dotted path through an array of documents', filter: { 'items.sku': 'A' }, expect: (d) => at(d, 'items.sku').includes('A') },
  { name: 'range through an array of documents', filter: { 'items.qty': { $gt: 4 } }, expect: (d) => at(d, 'items.qty').some((q) => typeof q === 'number' && q > 4) },
  { name: 'array element by position', filter: { 'tags.0': 'a' }, expect: (d) => Array.isArray(d.tags) && d.tags[0] === 'a' },
  { name: 'exact array', filter: { tags: ['a', 'b'] }, expect: (d) => Array.isArray(d.tags) && d.tags.length === 2 && d.tags[0] === 'a' && d.tags[1] === 'b' },
  { name: 'exact empty array', filter: { tags: [] }, expect: (d) => Array.isArray(d.tags) && d.tags.length === 0 },
  { name: '_id $in', filter: { _id: { $in: ['d001', 'd150', 'd299', 'nope'] } }, expect: (d) => ['d001', 'd150', 'd299'].includes(d._id) },
  { name: '_id range', filter: { _id: { $gte: 'd250' } }, expect: (d) => d._id >= 'd250' },
  { name: '$ne on an array: no element equals', filter: { tags: { $ne: 'a' } }, expect: (d) => !eq(d.tags, 'a') },
  { name: '$nin on an array', filter: { tags: { $nin: ['a', 'b'] } }, expect: (d) => !eq(d.tags, 'a') && !eq(d.tags, 'b') },
  { name: '$all with another condition and an $and', filter: { tags: { $all: ['a'], $size: 2 }, $and: [{ status: { $ne: 'draft' } }] }, expect: (d) => Array.isArray(d.tags) && d.tags.length === 2 && d.tags.includes('a') && d.status !== 'draft' },
  { name: '$all on a scalar field value', filter: { tags: { $all: ['c'] } }, expect: (d) => eq(d.tags, 'c') },
  { name: '$type array', filter: { tags: { $type: 'array' } }, expect: (d) => Array.isArray(d.tags) },
  { name: '$type with a list', filter: { mixed: { $type: ['null', 'string'] } }, expect: (d) => typeof d.mixed === 'string' },
  { name: '$regex with a dot and the s flag', filter: { name: { $regex: 'a.i', $options: 's' } }, expect: (d) => anyStr(d.name, (s) => /a.i/s.test(s)) },
  { name: '$regex with a character class and case folding', filter: { 'nested.city': { $regex: '^P[a-z]+S$', $options: 'i' } }, expect: (d) => anyStr(d.nested?.city, (s) => /^P[a-z]+S$/i.test(s)) },
  { name: 'field named like a stored field', filter: { r: { $exists: true } }, expect: (d) => 'r' in d },
  // Sorted: the expected order is computed by `compareFor` below.
  { name: 'sort by a number, missing first', filter: { status: 'open' }, sort: { n: 1 }, expect: (d) => d.status === 'open' },
  { name: 'sort by a number descending', filter: {}, sort: { n: -1 }, expect: () => true },
  { name: 'sort by a string with missing values', filter: { n: { $lt: 60 } }, sort: { name: 1 }, expect: (d) => typeof d.n === 'number' && d.n < 60 },
  { name: 'sort by two keys', filter: {}, sort: { status: 1, price: -1 }, expect: () => true },
  { name: 'sort by a dotted path', filter: { nested: { $exists: true } }, sort: { 'nested.city': -1 }, expect: (d) => d.nested !== undefined },
  { name: 'sort by a field of mixed types', filter: {}, sort: { mixed: 1 }, expect: () => true },
  { name: 'sort by a field of mixed types descending', filter: { status: 'open' }, sort: { mixed: -1 }, expect: (d) => d.status === 'open' },
  { name: 'sort by _id descending', filter: { flag: true }, sort: { _id: -1 }, expect: (d) => d.flag === true },
  // Projections.
  { name: 'inclusion projection', filter: { status: 'draft' }, projection: { name: 1, 'nested.city': 1 }, expect: (d) => d.status === 'draft' },
  { name: 'exclusion projection', filter: { status: 'closed' }, projection: { items: 0, nested: 0, scores: 0 }, expect: (d) => d.status === 'closed' },
  { name: 'projection without _id', filter: { n: 7 }, projection: { _id: 0, n: 1 }, expect: (d) => d.n === 7 },
];

/** MongoDB's order for the values our sort fields hold: missing/null < numbers < strings; `_id` breaks ties. */
function rank(v: unknown): [number, unknown] {
  if (v === undefined || v === null) return [0, null];
  if (typeof v === 'number') return [1, v];
  return [2, v];
}
const getPath = (d: Doc, path: string) => path.split('.').reduce<any>((c, k) => (c && typeof c === 'object' ? c[k] : undefined), d);

export function compareFor(sort: Record<string, 1 | -1>) {
  return (a: Doc, b: Doc): number => {
    for (const [key, dir] of Object.entries(sort)) {
      const [ra, va] = rank(getPath(a, key));
      const [rb, vb] = rank(getPath(b, key));
      const c = ra !== rb ? ra - rb : va === vb ? 0 : (va as any) < (vb as any) ? -1 : 1;
      if (c) return c * dir;
      if (key === '_id') return 0;
    }
    return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
  };
}

/** The projection by hand: top-level and one-level dotted paths, which is all the table uses. */
export function projectByHand(d: Doc, projection: Record<string, 0 | 1>): Doc {
  const inclusive = Object.entries(projection).some(([k, v]) => k !== '_id' && v === 1);
  const out: Doc = inclusive ? {} : structuredClone(d);
  for (const [path, v] of Object.entries(projection)) {
    const [head, tail] = path.split('.');
    if (inclusive && v === 1) {
      if (tail === undefined) { if (head in d) out[head] = d[head]; }
      else if (d[head] && typeof d[head] === 'object' && tail in d[head]) out[head] = { ...(out[head] ?? {}), [tail]: d[head][tail] };
      else if (d[head] && typeof d[head] === 'object') out[head] = out[head] ?? {};
    }
    if (!inclusive && v === 0) delete out[head];
  }
  if (inclusive && projection._id !== 0) out._id = d._id;
  if (projection._id === 0) delete out._id;
  return out;
}
