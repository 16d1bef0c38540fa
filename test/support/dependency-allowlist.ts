// The exceptions to the dependency rule (test/support/dependency-rules.ts) that we keep on purpose.
// Aim for none. Each entry names one importer and one target and says why the edge is tolerated;
// `typeOnly: true` tolerates the edge only as long as it stays an `import type` (a value import of the
// same target is a violation again). The architecture test fails on an entry that matches no
// violation, so this list cannot outlive the code it excuses. Every entry is also listed among the
// README's departures.

import type { Violation } from './dependency-rules.js';

export interface AllowedEdge {
  /** importing file relative to the repository root, or a folder ending in `/` for every file under it */
  readonly importer: string;
  /** imported file relative to the root, or the package / `node:` module name */
  readonly target: string;
  /** tolerate only a type-only import */
  readonly typeOnly?: boolean;
  readonly reason: string;
}

export const ALLOWED_EDGES: readonly AllowedEdge[] = [
  {
    importer: 'ports/',
    target: 'infra/config/index.ts',
    typeOnly: true,
    reason:
      'Ports that take settings (the Services bag, the MCP port) name the `Config` shape; it is plain ' +
      'data parsed by infra/config/index.ts from the environment, and a type-only import is erased at compile ' +
      'time, so no adapter code is reached. DESIGN §2 as the brief states it tolerates exactly this.',
  },
];

/** Whether an entry excuses a violation: same importer (or under its folder), same target, type-only if required. */
export function excuses(entry: AllowedEdge, v: Violation): boolean {
  const importer = entry.importer.endsWith('/') ? v.edge.file.startsWith(entry.importer) : entry.importer === v.edge.file;
  const target = v.edge.target ?? v.targetDescription;
  return importer && entry.target === target && (!entry.typeOnly || v.edge.typeOnly);
}
