import { expect } from 'chai';
import Koa from 'koa';
import type { Server } from 'node:http';
import { followLog, lastEventIdOf, openSse, type SseEvent, type SseWriter } from '../../api/sse.js';
import { readSse } from '../support/sse-client.js';
import { waitUntil } from '../support/wait.js';

/** api/sse.ts over a real HTTP server: named events with ids, pings, the abort signal on disconnect, replay after Last-Event-ID. */
describe('agents: the SSE helper (api/sse.ts)', () => {
  let server: Server;
  let url: string;
  let last: { writer: SseWriter | null; lastId: string | null } = { writer: null, lastId: null };
  const log: SseEvent[] = Array.from({ length: 5 }, (_, i) => ({ event: 'tick', id: i, data: { n: i } }));

  before(async () => {
    const app = new Koa();
    app.use(async (ctx) => {
      last.lastId = lastEventIdOf(ctx, /^\d+$/);
      const sse = openSse(ctx, { pingMs: 40 });
      last.writer = sse;
      if (ctx.path === '/replay') {
        const after = last.lastId === null ? -1 : Number(last.lastId);
        void followLog(sse, { after, read: async (from) => ({ events: log.filter((e) => Number(e.id) > from), next: log.length - 1, done: true }) });
      } else await sse.send({ event: 'hello', id: 1, data: { a: 1 } });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('writes named events with ids and a ping (no id) on its interval; the signal aborts when the client leaves', async () => {
    const read = await readSse(`${url}/live`, {}, (e) => e.event === 'ping');
    expect(read.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(read.events[0]).to.deep.equal({ event: 'hello', id: '1', data: { a: 1 } });
    expect(read.events[1].event).to.equal('ping');
    expect(read.events[1].id).to.equal(null);
    const writer = last.writer!;
    await waitUntil("the writer's signal to abort once the client left", () => writer.signal.aborted, 2_000, 10);
    expect(writer.closed).to.equal(true);
  });

  it('replays the events kept in the log after Last-Event-ID, then ends', async () => {
    const all = await readSse(`${url}/replay`, {});
    expect(all.events.filter((e) => e.event === 'tick').map((e) => e.id)).to.deep.equal(['0', '1', '2', '3', '4']);
    const after = await readSse(`${url}/replay`, { headers: { 'Last-Event-ID': '2' } });
    expect(after.events.filter((e) => e.event === 'tick').map((e) => e.data.n)).to.deep.equal([3, 4]);
    expect(last.lastId).to.equal('2');
  });
});
