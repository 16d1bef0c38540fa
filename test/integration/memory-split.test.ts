import { expect } from 'chai';
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { DistributedProcessGroup, type ServiceProcess } from '../support/service-process.js';
import { availableModes } from '../support/test-service.js';

/**
 * Memory search with the roles split: two API processes and a projector process. Each API process
 * keeps its own in-process search index; a change made through one must show in the other's next
 * search (the search first waits until the projector process reached the log's newest memory
 * event, then checks its index against the read store).
 */
const distributed = availableModes().includes('distributed');
if (!distributed) console.log('SKIP memory split roles: needs the distributed adapters (MONGODB_URL, KAFKA_BROKERS)');

(distributed ? describe : describe.skip)('memory search across processes (api, api, projector)', function () {
  this.timeout(120_000);
  let group: DistributedProcessGroup | null = null;
  after(async () => {
    await group?.stop();
  });

  it("a change made through one API process is in the other's next search", async () => {
    group = new DistributedProcessGroup('memroles');
    const env = group.env({});
    const [a, b, projector] = await group.start(env, ['api', 'api', 'projector']);
    const user = await registerUser(a.baseUrl);
    const op = (p: ServiceProcess, body: unknown) => call(p.baseUrl, 'POST', '/db/memory', body, user.auth);
    const search = async (p: ServiceProcess) => (await op(p, { operation: 'search', scope: { userId: 'ivy' }, query: 'Ivy city' })).body.results.map((r: { text: string }) => r.text);

    const saved = await op(a, { operation: 'save', scope: { userId: 'ivy' }, text: 'Ivy lives in the city of Porto' });
    expect(saved.status, saved.text).to.equal(200);
    // The save answers once in the log; the search waits for the projection to reach it (read-your-writes by position).
    expect(saved.headers.get('x-read-model'), 'a save does not wait for the projection').to.equal(null);
    const first = await op(b, { operation: 'search', scope: { userId: 'ivy' }, query: 'Ivy city' });
    expect(first.headers.get('x-read-model'), 'the search waited for the projector process').to.equal('current');
    expect(first.body.results.map((r: { text: string }) => r.text)).to.deep.equal(['Ivy lives in the city of Porto']);
    expect(await search(a)).to.deep.equal(['Ivy lives in the city of Porto']);

    const updated = await op(a, { operation: 'update', memoryId: saved.body.memory.id, text: 'Ivy moved to the city of Braga' });
    expect(updated.status, updated.text).to.equal(200);
    expect(await search(b), 'b reloads its index after a change made through a').to.deep.equal(['Ivy moved to the city of Braga']);

    const second = await op(b, { operation: 'save', scope: { userId: 'ivy' }, text: 'Ivy works in the old city centre' });
    expect((await search(a)).length).to.equal(2);
    expect((await op(b, { operation: 'delete', memoryId: second.body.memory.id })).status).to.equal(200);
    expect(await search(a)).to.deep.equal(['Ivy moved to the city of Braga']);
  });
});
