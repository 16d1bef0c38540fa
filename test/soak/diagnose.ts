/**
 * What the soak prints when a check failed, so that a failure in CI (where nothing else is kept)
 * says where the service stood: each projection's state, lag and last error, the dead letters, and
 * the service's own warnings and errors, counted by message, with the whole log written to a file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { call } from '../support/http.js';
import type { ServiceProcess } from '../support/service-process.js';

export async function diagnose(baseUrl: string, operatorAuth: Record<string, string>, processes: Array<{ name: string; process: ServiceProcess | null }>): Promise<string[]> {
  const lines: string[] = [];
  type Projection = { name: string; state: string; lag: number; position: number; lastError: string | null; busyMs: number | null };
  const read = async () => {
    const res = await call(baseUrl, 'GET', '/admin/projections', undefined, operatorAuth);
    return res.status === 200 ? (res.body.projections as Projection[]) : res.status;
  };
  // Read twice, 10 s apart: a lagging projection that moved is slow, one that did not is stuck.
  const first = await read();
  const later = typeof first === 'number' ? first : await new Promise<Projection[] | number>((resolve) => setTimeout(() => resolve(read()), 10_000));
  if (typeof first === 'number' || typeof later === 'number') lines.push(`GET /admin/projections answered ${typeof first === 'number' ? first : later}`);
  else {
    for (const p of first) {
      const then = later.find((x) => x.name === p.name);
      const moved = then ? then.position - p.position : 0;
      const verdict = p.lag > 0 ? (moved > 0 ? `, moved ${moved} in 10 s (lag then ${then!.lag})` : ', did not move in 10 s (stuck)') : '';
      if (p.state !== 'running' || p.lag > 0) lines.push(`projection ${p.name}: ${p.state}, position ${p.position}, lag ${p.lag}${verdict}${p.busyMs !== null ? `, batch in flight ${Math.round(p.busyMs / 1000)} s` : ''}${p.lastError ? `, last error ${p.lastError.slice(0, 200)}` : ''}`);
    }
    if (!lines.length) lines.push('every projection is running with no lag');
  }
  const letters = await call(baseUrl, 'GET', '/admin/dead-letters?limit=20', undefined, operatorAuth);
  if (letters.status === 200) {
    for (const l of letters.body.deadLetters ?? []) lines.push(`dead letter ${JSON.stringify(l).slice(0, 300)}`);
  }
  for (const { name, process } of processes) {
    if (!process) continue;
    const log = process.stdout() + process.stderr();
    const file = join(tmpdir(), `soak-${name}-${Date.now()}.log`);
    writeFileSync(file, log);
    lines.push(`${name} log (${log.length} bytes): ${file}`);
    for (const [message, n] of countMessages(log).slice(0, 15)) lines.push(`  ${String(n).padStart(5)} × ${message}`);
  }
  return lines;
}

/** pino lines at warn and above, counted by `msg` plus the error's first line. */
function countMessages(log: string): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string }; projection?: string; consumer?: string };
      if ((entry.level ?? 0) < 40) continue;
      const who = entry.projection ?? entry.consumer ?? '';
      const key = `${entry.msg ?? '?'}${who ? ` [${who}]` : ''}${entry.err?.message ? `: ${entry.err.message.split('\n')[0].slice(0, 160)}` : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}
