/**
 * Profiling aid: wraps methods of the service's ports so that each call's time is summed per label
 * while `on` (the wrapped method is still called, with the same arguments). Per-phase wall time of
 * a request path, which a CPU profile of async code does not attribute (issue 29).
 */
export function phaseTimer() {
  const totals: Record<string, { ms: number; calls: number }> = {};
  const timer = {
    on: false,
    wrap(target: object, method: string, label: string) {
      const holder = target as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const original = holder[method].bind(target);
      holder[method] = async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await original(...args);
        } finally {
          if (timer.on) {
            const total = (totals[label] ??= { ms: 0, calls: 0 });
            total.ms += performance.now() - t0;
            total.calls += 1;
          }
        }
      };
    },
    /** One line per label: ms and calls per unit of work (a run, a workflow). */
    print(units: number, unit: string) {
      for (const [label, t] of Object.entries(totals)) console.log(`${label.padEnd(26)} ${(t.ms / units).toFixed(3)} ms/${unit}  ${(t.calls / units).toFixed(2)} calls/${unit}`);
    },
  };
  return timer;
}
