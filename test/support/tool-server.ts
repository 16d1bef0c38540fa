import { createServer, type Server } from 'node:http';

/** A local HTTP tool endpoint: records each request's start and whether the client aborted it; answers after `delayMs`. */
export async function startToolServer() {
  const calls: Array<{ at: number; body: string; aborted: boolean; answered: boolean }> = [];
  let delayMs = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { at: Date.now(), body: Buffer.concat(chunks).toString('utf8'), aborted: false, answered: false };
      calls.push(entry);
      res.on('close', () => {
        if (!entry.answered) entry.aborted = true;
      });
      setTimeout(() => {
        if (res.destroyed) return;
        entry.answered = true;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echoed: entry.body }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/tool`,
    calls,
    setDelay: (ms: number) => (delayMs = ms),
    close: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}
