/**
 * Crash-test writer: appends single events forever to a SQLite event store, round-robin over a few
 * streams, each with its expected revision, and prints `ack <streamId> <revision> <eventId>` to
 * stdout only after `append` has resolved. Meant to be killed with SIGKILL.
 *
 *   node --import tsx test/support/append-forever.ts <file.db> [streams=4]
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const [file, streamCount = '4'] = process.argv.slice(2);
if (!file) {
  console.error('usage: append-forever.ts <file.db> [streams]');
  process.exit(2);
}

const store = new SqliteEventStore(file);
const streams = Array.from({ length: Number(streamCount) }, (_, i) => `crash-s${i}`);
// Restarted on the same file: continue each stream from its last stored revision.
const last = new Map<string, number | null>();
for (const s of streams) last.set(s, (await store.readStream(s, { direction: 'backwards', maxCount: 1 }))[0]?.revision ?? null);

for (let seq = 0; ; seq++) {
  const streamId = streams[seq % streams.length]!;
  const previous = last.get(streamId) ?? null;
  const id = randomUUID();
  const result = await store.append(
    streamId,
    [
      {
        id,
        type: 'CrashTestAppended',
        // Variable-size payloads so a torn page would show up as unparsable JSON.
        data: { seq, pid: process.pid, pad: 'x'.repeat((seq * 397) % 4096) },
        metadata: {
          actorId: 'crash-test',
          orgId: null,
          workspaceId: null,
          correlationId: id,
          causationId: null,
          requestId: null,
          occurredAt: new Date().toISOString(),
        },
      },
    ],
    previous === null ? 'no_stream' : previous,
  );
  last.set(streamId, result.revision);
  // stdout to a pipe is synchronous on Linux: once written, the parent can count on it.
  process.stdout.write(`ack ${streamId} ${result.revision} ${id}\n`);
  if (seq % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
}
