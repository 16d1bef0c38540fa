import { DomainError } from '../shared/decider.js';
import { WORKFLOW_STATUSES } from './state.js';

/**
 * The filter language of GET /workflows/search (`?query=`), a small recursive-descent parser:
 *
 *   query      := or
 *   or         := and ( OR and )*
 *   and        := unary ( AND unary )*
 *   unary      := NOT unary | primary
 *   primary    := '(' or ')' | field predicate
 *   predicate  := op value | [NOT] IN '(' value ( ',' value )* ')' | BETWEEN value AND value | STARTS_WITH value
 *   op         := = | != | > | >= | < | <=
 *   value      := 'text' | "text" | number | true | false
 *   field      := WorkflowId | FlowId | ExecutionStatus | StartTime | CloseTime | CreateTime | <search attribute>
 *
 * Keywords are case-insensitive; fields are identifiers ([A-Za-z_][A-Za-z0-9_]*). A malformed
 * query is INVALID_QUERY (400) with `details.position` (0-based offset into the query).
 */
export const MAX_QUERY_LENGTH = 2000;
const MAX_DEPTH = 32;
const MAX_IN_VALUES = 100;

export type QueryValue = string | number | boolean;
export type QueryNode =
  | { kind: 'and' | 'or'; left: QueryNode; right: QueryNode }
  | { kind: 'not'; expr: QueryNode }
  | { kind: 'compare'; field: string; op: '=' | '!=' | '>' | '>=' | '<' | '<='; value: QueryValue; position: number }
  | { kind: 'in'; field: string; values: QueryValue[]; negated: boolean; position: number }
  | { kind: 'between'; field: string; low: QueryValue; high: QueryValue; position: number }
  | { kind: 'starts_with'; field: string; prefix: string; position: number };

export const invalidQuery = (message: string, position: number) => new DomainError('INVALID_QUERY', `${message} at position ${position}`, 'invalid', { position, message });

type Token =
  | { t: 'ident'; v: string; pos: number }
  | { t: 'string'; v: string; pos: number }
  | { t: 'number'; v: number; pos: number }
  | { t: 'op'; v: string; pos: number }
  | { t: 'punct'; v: '(' | ')' | ','; pos: number }
  | { t: 'end'; pos: number };

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '(' || c === ')' || c === ',') {
      out.push({ t: 'punct', v: c, pos: i++ });
    } else if (c === "'" || c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= q.length) throw invalidQuery('unterminated string', start);
        if (q[i] === c) {
          if (q[i + 1] === c) {
            v += c;
            i += 2;
            continue;
          }
          i++;
          break;
        }
        v += q[i++];
      }
      out.push({ t: 'string', v, pos: start });
    } else if (/[0-9]/.test(c) || (c === '-' && /[0-9.]/.test(q[i + 1] ?? ''))) {
      const m = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(q.slice(i))!;
      i += m[0].length;
      if (/[A-Za-z_]/.test(q[i] ?? '')) throw invalidQuery('malformed number', start);
      out.push({ t: 'number', v: Number(m[0]), pos: start });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(q.slice(i))!;
      i += m[0].length;
      out.push({ t: 'ident', v: m[0], pos: start });
    } else if ('=!<>'.includes(c)) {
      const two = q.slice(i, i + 2);
      if (two === '!=' || two === '>=' || two === '<=' || two === '<>') {
        out.push({ t: 'op', v: two === '<>' ? '!=' : two, pos: i });
        i += 2;
      } else if (c === '!') {
        throw invalidQuery("unexpected '!' (did you mean '!=')", i);
      } else {
        out.push({ t: 'op', v: c, pos: i++ });
      }
    } else {
      throw invalidQuery(`unexpected character '${c}'`, i);
    }
  }
  out.push({ t: 'end', pos: q.length });
  return out;
}

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'IN', 'BETWEEN', 'STARTS_WITH', 'TRUE', 'FALSE']);

export function parseWorkflowQuery(query: string): QueryNode {
  if (query.length > MAX_QUERY_LENGTH) throw invalidQuery(`the query is longer than ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH);
  if (query.trim() === '') throw invalidQuery('the query is empty', 0);
  const tokens = tokenize(query);
  let p = 0;
  const peek = () => tokens[p];
  const isKw = (tok: Token, kw: string) => tok.t === 'ident' && tok.v.toUpperCase() === kw;
  const describe = (tok: Token) => (tok.t === 'end' ? 'the end of the query' : `'${'v' in tok ? String(tok.v) : ''}'`);
  const expectPunct = (v: string) => {
    const tok = peek();
    if (tok.t !== 'punct' || tok.v !== v) throw invalidQuery(`expected '${v}' but found ${describe(tok)}`, tok.pos);
    p++;
  };

  function value(): QueryValue {
    const tok = peek();
    if (tok.t === 'string' || tok.t === 'number') {
      p++;
      return tok.v;
    }
    if (isKw(tok, 'TRUE') || isKw(tok, 'FALSE')) {
      p++;
      return (tok as { v: string }).v.toUpperCase() === 'TRUE';
    }
    throw invalidQuery(`expected a value (a quoted string, a number, true or false) but found ${describe(tok)}`, tok.pos);
  }

  function or(depth: number): QueryNode {
    if (depth > MAX_DEPTH) throw invalidQuery(`the query nests deeper than ${MAX_DEPTH} levels`, peek().pos);
    let left = and(depth);
    while (isKw(peek(), 'OR')) {
      p++;
      left = { kind: 'or', left, right: and(depth) };
    }
    return left;
  }
  function and(depth: number): QueryNode {
    let left = unary(depth);
    while (isKw(peek(), 'AND')) {
      p++;
      left = { kind: 'and', left, right: unary(depth) };
    }
    return left;
  }
  function unary(depth: number): QueryNode {
    if (isKw(peek(), 'NOT')) {
      p++;
      if (depth + 1 > MAX_DEPTH) throw invalidQuery(`the query nests deeper than ${MAX_DEPTH} levels`, peek().pos);
      return { kind: 'not', expr: unary(depth + 1) };
    }
    return primary(depth);
  }
  function primary(depth: number): QueryNode {
    const tok = peek();
    if (tok.t === 'punct' && tok.v === '(') {
      p++;
      const inner = or(depth + 1);
      expectPunct(')');
      return inner;
    }
    if (tok.t !== 'ident' || KEYWORDS.has(tok.v.toUpperCase())) throw invalidQuery(`expected a field name or '(' but found ${describe(tok)}`, tok.pos);
    p++;
    const field = tok.v;
    const next = peek();
    if (next.t === 'op') {
      p++;
      return { kind: 'compare', field, op: next.v as '=', value: value(), position: tok.pos };
    }
    const negated = isKw(next, 'NOT');
    if (negated) p++;
    if (isKw(peek(), 'IN')) {
      p++;
      expectPunct('(');
      const values = [value()];
      while (peek().t === 'punct' && (peek() as { v: string }).v === ',') {
        p++;
        values.push(value());
        if (values.length > MAX_IN_VALUES) throw invalidQuery(`IN takes at most ${MAX_IN_VALUES} values`, peek().pos);
      }
      expectPunct(')');
      return { kind: 'in', field, values, negated, position: tok.pos };
    }
    if (negated) throw invalidQuery(`expected IN after NOT but found ${describe(peek())}`, peek().pos);
    if (isKw(next, 'BETWEEN')) {
      p++;
      const low = value();
      if (!isKw(peek(), 'AND')) throw invalidQuery(`expected AND in BETWEEN but found ${describe(peek())}`, peek().pos);
      p++;
      return { kind: 'between', field, low, high: value(), position: tok.pos };
    }
    if (isKw(next, 'STARTS_WITH')) {
      p++;
      const at = peek();
      const prefix = value();
      if (typeof prefix !== 'string') throw invalidQuery('STARTS_WITH takes a quoted string', at.pos);
      return { kind: 'starts_with', field, prefix, position: tok.pos };
    }
    throw invalidQuery(`expected an operator (=, !=, >, >=, <, <=, IN, BETWEEN, STARTS_WITH) after ${field} but found ${describe(next)}`, next.pos);
  }

  const tree = or(0);
  const rest = peek();
  if (rest.t !== 'end') throw invalidQuery(`unexpected ${describe(rest)}`, rest.pos);
  return tree;
}

// ---------------------------------------------------------------- translation to a read-store filter

/** The built-in fields and the read model's field each one is; any other name is a search attribute. */
export const QUERY_FIELDS: Record<string, { path: string; type: 'text' | 'status' | 'time' }> = {
  WorkflowId: { path: '_id', type: 'text' },
  FlowId: { path: 'flowId', type: 'text' },
  ExecutionStatus: { path: 'status', type: 'status' },
  StartTime: { path: 'startedAt', type: 'time' },
  CloseTime: { path: 'closedAt', type: 'time' },
  CreateTime: { path: 'createdAt', type: 'time' },
};

function fieldOf(name: string) {
  const builtIn = Object.hasOwn(QUERY_FIELDS, name) ? QUERY_FIELDS[name] : undefined;
  return builtIn ?? { path: `searchAttributes.${name}`, type: 'attribute' as const };
}

function normalize(field: ReturnType<typeof fieldOf>, v: QueryValue, position: number): QueryValue {
  if (field.type === 'status') {
    const s = String(v).toUpperCase();
    if (!(WORKFLOW_STATUSES as readonly string[]).includes(s)) throw invalidQuery(`unknown ExecutionStatus '${String(v)}' (one of ${WORKFLOW_STATUSES.join(', ')})`, position);
    return s;
  }
  if (field.type === 'time') {
    const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
    if (Number.isNaN(ms)) throw invalidQuery(`a time must be a quoted ISO 8601 time, not ${JSON.stringify(v)}`, position);
    return new Date(ms).toISOString();
  }
  if (field.type === 'text' && typeof v !== 'string') throw invalidQuery('this field takes a quoted string', position);
  return v;
}

const OPS = { '=': '$eq', '!=': '$ne', '>': '$gt', '>=': '$gte', '<': '$lt', '<=': '$lte' } as const;

/** A MongoDB-style filter over the `workflows` read model (projections/workflows.ts). */
export function toWorkflowFilter(node: QueryNode): Record<string, unknown> {
  switch (node.kind) {
    case 'and':
      return { $and: [toWorkflowFilter(node.left), toWorkflowFilter(node.right)] };
    case 'or':
      return { $or: [toWorkflowFilter(node.left), toWorkflowFilter(node.right)] };
    case 'not':
      return { $nor: [toWorkflowFilter(node.expr)] };
    case 'compare': {
      const f = fieldOf(node.field);
      return { [f.path]: { [OPS[node.op]]: normalize(f, node.value, node.position) } };
    }
    case 'in': {
      const f = fieldOf(node.field);
      return { [f.path]: { [node.negated ? '$nin' : '$in']: node.values.map((v) => normalize(f, v, node.position)) } };
    }
    case 'between': {
      const f = fieldOf(node.field);
      return { [f.path]: { $gte: normalize(f, node.low, node.position), $lte: normalize(f, node.high, node.position) } };
    }
    case 'starts_with': {
      const f = fieldOf(node.field);
      if (f.type === 'time' || f.type === 'status') throw invalidQuery(`STARTS_WITH does not apply to ${node.field}`, node.position);
      return { [f.path]: { $gte: node.prefix, $lt: `${node.prefix}\uffff` } };
    }
  }
}

export const workflowSearchFilter = (query: string) => toWorkflowFilter(parseWorkflowQuery(query));
