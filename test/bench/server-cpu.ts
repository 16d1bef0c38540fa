/**
 * CPU time of the test servers (Kafka, the MongoDB-wire server and its PostgreSQL) while a
 * benchmark runs, read from /proc by the pid files `.ci/servers.sh` writes: on this 2-core machine
 * they share the cores with the service, so a throughput aim is only reachable if service and
 * servers together fit in them. Linux only; elsewhere, or without the pid files, it measures nothing.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const TICKS_PER_SECOND = 100;

/** Pids of a server and its children (PostgreSQL's backends are children of the postmaster). */
function pidsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      (children.get(parent) ?? children.set(parent, []).get(parent)!).push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    out.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return out;
}

/** utime + stime of the processes, in ms (the ones that ended meanwhile are not counted). */
function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone.
    }
  }
  return (ticks / TICKS_PER_SECOND) * 1000;
}

/** Starts counting; `stop()` gives each running server's CPU ms since (empty when nothing could be read). */
export function serverCpu(servers = ['kafka', 'ferretdb', 'postgres']): { stop(): Record<string, number> } {
  const runDir = join(process.env.SERVERS_DIR ?? join(process.cwd(), '.servers'), 'run');
  const roots: Record<string, number> = {};
  if (process.platform === 'linux') {
    for (const name of servers) {
      const file = join(runDir, `${name}.pid`);
      if (existsSync(file)) roots[name] = Number(readFileSync(file, 'utf8').trim());
    }
  }
  const start = Object.fromEntries(Object.entries(roots).map(([name, pid]) => [name, cpuMs(pidsOf(pid))]));
  return {
    stop: () => Object.fromEntries(Object.entries(roots).map(([name, pid]) => [name, cpuMs(pidsOf(pid)) - start[name]!])),
  };
}
