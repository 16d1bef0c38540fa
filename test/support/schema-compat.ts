/**
 * Whether a consumer written against `before` (a JSON Schema of a public event's data) still
 * understands every message valid under `after`. Breaking: a property removed, a required
 * property made optional, a type changed, an enum value added (a consumer's exhaustive switch),
 * a const changed, any other constraint changed. Not breaking: a property added (consumers ignore
 * unknown fields), an enum value removed, a description changed.
 */
type Schema = Record<string, unknown>;
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'default']);

export function breakingChanges(before: Schema, after: Schema, path = ''): string[] {
  const problems: string[] = [];
  const at = path || '/';
  if (before.type === 'object' || after.type === 'object') {
    if (before.type !== after.type) return [`${at}: type ${JSON.stringify(before.type)} became ${JSON.stringify(after.type)}`];
    const oldProps = (before.properties ?? {}) as Record<string, Schema>;
    const newProps = (after.properties ?? {}) as Record<string, Schema>;
    const newRequired = new Set((after.required ?? []) as string[]);
    for (const name of Object.keys(oldProps)) {
      if (!(name in newProps)) problems.push(`${path}/${name}: removed`);
      else problems.push(...breakingChanges(oldProps[name]!, newProps[name]!, `${path}/${name}`));
    }
    for (const name of (before.required ?? []) as string[]) if (!newRequired.has(name)) problems.push(`${path}/${name}: no longer required`);
    return problems;
  }
  if (Array.isArray(before.enum) || Array.isArray(after.enum)) {
    const old = new Set((before.enum ?? []) as unknown[]);
    const added = ((after.enum ?? []) as unknown[]).filter((v) => !old.has(v));
    if (!Array.isArray(after.enum)) problems.push(`${at}: no longer an enum`);
    else if (added.length > 0) problems.push(`${at}: enum values added ${JSON.stringify(added)}`);
  }
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (ANNOTATIONS.has(key) || key === 'enum') continue;
    const a = before[key];
    const b = after[key];
    if (key === 'items' && a && b && typeof a === 'object' && typeof b === 'object') problems.push(...breakingChanges(a as Schema, b as Schema, `${path}[]`));
    else if (key === 'anyOf' && Array.isArray(a) && Array.isArray(b) && a.length === b.length) a.forEach((s, i) => problems.push(...breakingChanges(s as Schema, b[i] as Schema, `${path}|${i}`)));
    else if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`${at}: ${key} ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
  }
  return problems;
}
