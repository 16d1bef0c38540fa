/**
 * Small pieces the runs, workflows and agents pages share: a status badge (the base stylesheet
 * colours `.status-<x>`; workflows answer in capitals, so the class is lower-cased) and a JSON
 * value shown as text.
 */
export function StatusBadge({ status }: { status: string }) {
  const key = status.toLowerCase();
  return <span className={`status status-${key}`}>{key.replace(/_/g, ' ')}</span>;
}

export function JsonValue({ value, label }: { value: unknown; label?: string }) {
  if (value === undefined) return <span className="muted">—</span>;
  if (typeof value === 'string') return <span className="value-text">{value}</span>;
  return (
    <pre className="json" aria-label={label}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** Milliseconds as a person reads a duration. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function formatCost(cost: number | null | undefined): string {
  if (!cost) return '—';
  return `$${cost < 0.01 ? cost.toFixed(6) : cost.toFixed(4)}`;
}
