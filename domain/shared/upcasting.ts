/**
 * Events are never rewritten in the log; when an event's shape changes, its schemaVersion goes up
 * and an upcaster turns each older version into the next one as it is read.
 */
export interface Upcaster {
  type: string;
  /** The version this upcaster reads; it produces `fromVersion + 1`. */
  fromVersion: number;
  upcast(data: unknown): unknown;
}

export function upcast(upcasters: Upcaster[], type: string, version: number, data: unknown): { version: number; data: unknown } {
  let current = { version, data };
  for (;;) {
    const next = upcasters.find((u) => u.type === type && u.fromVersion === current.version);
    if (!next) return current;
    current = { version: current.version + 1, data: next.upcast(current.data) };
  }
}
