import { expect } from 'chai';
import Koa from 'koa';
import { MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { errorHandler } from '../../api/middleware/error-handler.js';
import { unavailableDependency } from '../../infra/availability/classify.js';
import type { Logger } from '../../ports/logger.js';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** node-redis leaves `name` as "Error": only the class tells its errors apart. */
class ClientClosedError extends Error {}

describe('a server we depend on that did not answer is 503 SERVICE_UNAVAILABLE, not 500', () => {
  it('names the server from the drivers’ errors, following `cause`, and nothing else', () => {
    expect(unavailableDependency(new MongoNetworkError('connection refused'))).to.equal('read store');
    expect(unavailableDependency(new MongoServerSelectionError('server selection timed out', { type: 'Unknown', servers: new Map() } as never))).to.equal('read store');
    // FerretDB while PostgreSQL behind it restarts.
    expect(unavailableDependency(new MongoServerError({ message: 'failed to connect to `host=127.0.0.1 user=postgres database=ferretdb`: dial error', code: 1 }))).to.equal('read store');
    expect(unavailableDependency(new ClientClosedError('The client is closed'))).to.equal('key-value store');
    expect(unavailableDependency(Object.assign(new Error('Connection error: connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' }))).to.equal('bus');
    expect(unavailableDependency(new Error('wrapped', { cause: new MongoNetworkError('reset') }))).to.equal('read store');
    // The driver writing on a socket FerretDB closed: a bare EPIPE whose stack is the driver's.
    const epipe = Object.assign(new Error('This socket has been ended by the other party'), { code: 'EPIPE' });
    epipe.stack = `Error: This socket has been ended by the other party\n    at Socket.writeAfterFIN (node:net:566:14)\n    at Connection.writeCommand (/srv/node_modules/mongodb/src/cmap/connection.ts:720:21)`;
    expect(unavailableDependency(epipe)).to.equal('read store');
    // The same code from a socket of our own (an outbound webhook) is not a dependency of ours.
    expect(unavailableDependency(Object.assign(new Error('write EPIPE'), { code: 'EPIPE', stack: 'Error: write EPIPE\n    at /srv/infra/http/outbound.ts:1:1' }))).to.equal(null);
    expect(unavailableDependency(new MongoServerError({ message: 'E11000 duplicate key', code: 11000 }))).to.equal(null);
    expect(unavailableDependency(new TypeError('x is undefined'))).to.equal(null);
  });

  it('answers 503 with the dependency and Retry-After, and a plain bug still 500', async () => {
    const app = new Koa();
    app.use(errorHandler(silent, () => undefined, unavailableDependency));
    app.use(async (ctx) => {
      if (ctx.path === '/down') throw new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017');
      throw new Error('a bug');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const down = await fetch(`${base}/down`);
      expect(down.status).to.equal(503);
      expect(down.headers.get('retry-after')).to.equal('5');
      expect((await down.json()).error).to.deep.include({ code: 'SERVICE_UNAVAILABLE', details: { dependency: 'read store', retryAfterSeconds: 5 } });
      const bug = await fetch(`${base}/bug`);
      expect(bug.status).to.equal(500);
      expect((await bug.json()).error.code).to.equal('INTERNAL_ERROR');
    } finally {
      server.close();
    }
  });
});
