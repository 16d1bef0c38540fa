import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteEventStore } from '../../infra/event-store/sqlite.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const writer = join(root, 'test/support/append-forever.ts');
const KILL_AFTER = 300;
const ROUNDS = 3; // first kill, then restart on the same file and kill twice more

interface Ack {
  streamId: string;
  revision: number;
  id: string;
}

/** Runs the writer until it has acknowledged `count` more appends, then SIGKILLs it. */
function runAndKill(file: string, count: number): Promise<Ack[]> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, file, '4'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const acks: Ack[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!; // a torn last line is not an acknowledgement
      for (const line of lines) {
        const [tag, streamId, revision, id] = line.split(' ');
        if (tag !== 'ack' || !streamId || !revision || !id) continue;
        acks.push({ streamId, revision: Number(revision), id });
      }
      if (!killed && acks.length >= count) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (killed && signal === 'SIGKILL') resolvePromise(acks);
      else reject(new Error(`writer exited (code ${code}, signal ${signal}) after ${acks.length} acks: ${stderr}`));
    });
  });
}

interface RawRow {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  data: string;
  metadata: string;
}

describe('SQLite event store survives SIGKILL of a writing process', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-crash-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`keeps every acknowledged append, with no torn event, across ${ROUNDS} kills`, async () => {
    const file = join(dir, 'events.db');
    const acknowledged: Ack[] = [];
    const ourAppends = new Map<string, string>(); // event id -> stream, appended by the test between rounds

    for (let round = 1; round <= ROUNDS; round++) {
      const acks = await runAndKill(file, KILL_AFTER);
      expect(acks.length, `round ${round}: acknowledged appends`).to.be.at.least(KILL_AFTER);
      acknowledged.push(...acks);

      const store = new SqliteEventStore(file);
      try {
        expect(store.db.pragma('integrity_check', { simple: true }), `round ${round}: integrity_check`).to.equal('ok');
        const rows = store.db.prepare<[], RawRow>('SELECT position, id, stream_id, revision, data, metadata FROM events ORDER BY position').all();
        expect(rows.length).to.be.at.least(acknowledged.length + ourAppends.size);
        for (const row of rows) {
          expect(() => JSON.parse(row.data), `data of event ${row.id}`).not.to.throw();
          expect(() => JSON.parse(row.metadata), `metadata of event ${row.id}`).not.to.throw();
          expect(JSON.parse(row.metadata)).to.have.property('occurredAt').that.is.a('string');
        }
        const ids = new Map(rows.map((r) => [r.id, r]));
        for (const ack of acknowledged) {
          const row = ids.get(ack.id);
          expect(row, `acknowledged event ${ack.streamId}@${ack.revision} (${ack.id})`).to.not.equal(undefined);
          expect([row!.stream_id, row!.revision]).to.deep.equal([ack.streamId, ack.revision]);
        }
        for (const [id, streamId] of ourAppends) expect(ids.get(id)?.stream_id, `test append ${id}`).to.equal(streamId);

        const streams = [...new Set(rows.map((r) => r.stream_id))];
        expect(streams).to.have.length(4);
        for (const streamId of streams) {
          const events = await store.readStream(streamId);
          expect(events.map((e) => e.revision), `revisions of ${streamId}`).to.deep.equal(events.map((_, i) => i));
          const positions = events.map((e) => e.position);
          expect(positions, `positions of ${streamId}`).to.deep.equal([...positions].sort((a, b) => a - b));
        }

        // Appends work again, with the expected revision read back from the reopened file.
        for (const streamId of streams) {
          const [lastEvent] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
          const id = randomUUID();
          const result = await store.append(
            streamId,
            [{ id, type: 'AfterCrash', data: { round }, metadata: { actorId: null, orgId: null, workspaceId: null, correlationId: id, causationId: null, requestId: null, occurredAt: new Date().toISOString() } }],
            lastEvent!.revision,
          );
          expect(result.revision).to.equal(lastEvent!.revision + 1);
          expect(result.position).to.equal(await store.headPosition());
          ourAppends.set(id, streamId);
        }
      } finally {
        await store.close();
      }
    }
  });
});
