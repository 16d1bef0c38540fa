import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startTestService, waitUntil, type TestService } from '../support/test-service.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
/** Names no public message may carry, in a header, a key of the data, or anywhere in the value's text as a key. */
const FORBIDDEN = /password|secret|token|hash|apikey|api_key/i;

interface KcatMessage { topic: string; partition: number; offset: number; key: string | null; payload: string | null; headers?: string[] }

/** Every message of a topic, read to its end by kcat (Debian's kafkacat), as JSON envelopes. */
async function kcat(brokers: string, topic: string): Promise<KcatMessage[]> {
  const { stdout } = await run('kcat', ['-C', '-b', brokers, '-t', topic, '-o', 'beginning', '-e', '-q', '-J'], { maxBuffer: 64 * 1024 * 1024, timeout: 30_000 });
  return stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as KcatMessage);
}
async function publicTopics(brokers: string, prefix: string): Promise<string[]> {
  const { stdout } = await run('kcat', ['-L', '-b', brokers, '-J'], { maxBuffer: 16 * 1024 * 1024, timeout: 30_000 });
  return (JSON.parse(stdout) as { topics: Array<{ topic: string }> }).topics.map((t) => t.topic).filter((t) => t.startsWith(`${prefix}.public.`)).sort();
}
function headersOf(m: KcatMessage): Record<string, string> {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < (m.headers ?? []).length; i += 2) h[m.headers![i]!] = m.headers![i + 1]!;
  return h;
}
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

describe('public integration events on Kafka, read by kcat and by Python confluent-kafka (issue 32)', function () {
  this.timeout(180_000);
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers || !process.env.MONGODB_URL) {
    if (process.env.REQUIRE_SERVERS === 'true') it('needs KAFKA_BROKERS and MONGODB_URL', () => expect.fail('KAFKA_BROKERS and MONGODB_URL are required when REQUIRE_SERVERS=true'));
    else console.log('SKIP public integration events: KAFKA_BROKERS and MONGODB_URL are not set (bash .ci/servers.sh start)');
    return;
  }
  let svc: TestService;
  let dir: string;
  before(async () => {
    svc = await startTestService('distributed', { RATE_LIMIT_AUTH_PER_MINUTE: '1000', PUBLIC_EVENTS: 'true' });
    dir = mkdtempSync(join(tmpdir(), 'public-events-'));
  });
  after(async () => {
    await svc?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A user in an organization of their own (or none), who creates a flow with one offline LLM node and runs it. */
  async function tenantRuns(name: string, inOrg: boolean) {
    const user: RegisteredUser = await registerUser(svc.baseUrl, { password: `pw-${name}-Sup3rSecretPassword` });
    let auth = user.auth;
    let orgId: string | null = null;
    if (inOrg) {
      const org = await call(svc.baseUrl, 'POST', '/orgs', { name: `Public ${name}` }, auth);
      expect(org.status, org.text).to.equal(201);
      orgId = org.body.organization.id as string;
      auth = { Authorization: `Bearer ${(await call(svc.baseUrl, 'POST', '/orgs/switch', { orgId }, auth)).body.token}` };
    }
    const key = await call(svc.baseUrl, 'POST', '/api-keys', { name: 'not public' }, auth);
    expect(key.status, key.text).to.equal(201);
    const flow = (await call(svc.baseUrl, 'POST', '/flows', { name: `flow of ${name}` }, auth)).body.flow;
    const node = await call(svc.baseUrl, 'POST', `/flows/${flow.id}/nodes`, { type: 'custom', position: { x: 0, y: 0 }, data: { nodeType: 'llm', llm: 'offline', model: 'any', prompt: 'hi' } }, auth);
    expect(node.status, node.text).to.equal(201);
    expect((await call(svc.baseUrl, 'POST', '/db/collections', { name: `people_${name}` }, auth)).status).to.equal(201);
    const doc = await call(svc.baseUrl, 'POST', `/db/collections/people_${name}/documents`, { id: `d-${name}`, document: { email: `${name}@example.test`, password: `${name}-Sup3rSecretPassword` } }, auth);
    expect(doc.status, doc.text).to.equal(201);
    const ran = await call(svc.baseUrl, 'POST', `/flows/${flow.id}/run`, { inputs: {} }, auth);
    expect(ran.status, ran.text).to.equal(200);
    const processId = (ran.body.processId ?? ran.body.id) as string;
    expect(processId, ran.text).to.be.a('string');
    return { name, tenant: orgId ? `org.${orgId}` : `user.${user.user.id}`, flowId: flow.id as string, processId, password: user.password, apiKey: key.body.key as string };
  }

  it('publishes each tenant\'s flow and run events to its own topic as CloudEvents valid against /api/asyncapi.json; nothing secret anywhere', async () => {
    const prefix = svc.services.config.KAFKA_TOPIC_PREFIX;
    const [a, b, c] = [await tenantRuns('a', true), await tenantRuns('b', true), await tenantRuns('c', false)];
    const tenants = [a, b, c];
    const asyncapiAnswer = await call(svc.baseUrl, 'GET', '/asyncapi.json');
    expect(asyncapiAnswer.status).to.equal(200);
    const asyncapi = asyncapiAnswer.body as { channels: { tenantEvents: { address: string } }; components: { schemas: Record<string, object>; messages: Record<string, { headers: object }> } };
    expect(asyncapi.channels.tenantEvents.address).to.equal(`${prefix}.public.{tenant}`);
    const asyncapiFile = join(dir, 'asyncapi.json');
    writeFileSync(asyncapiFile, JSON.stringify(asyncapi));

    // The consumer publishes after the relay: wait until every tenant's run completed on its topic.
    const read = new Map<string, KcatMessage[]>();
    await waitUntil('every tenant\'s run.completed on its public topic', async () => {
      for (const t of tenants) {
        const topic = `${prefix}.public.${t.tenant}`;
        const topics = await publicTopics(brokers, prefix);
        if (!topics.includes(topic)) return false;
        const messages = await kcat(brokers, topic);
        read.set(topic, messages);
        if (!messages.some((m) => headersOf(m).ce_type === 'flowsvc.run.completed.v1' && headersOf(m).ce_subject === `runs/${t.processId}`)) return false;
      }
      return true;
    }, 60_000, 500);

    // kcat: every message, every header, every data against its schema.
    const ajv = new Ajv({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
    const secrets = tenants.flatMap((t) => [t.password, t.apiKey, t.apiKey.split('.').pop()!]);
    const all = await publicTopics(brokers, prefix);
    expect(all, 'one topic per tenant, no other').to.deep.equal(tenants.map((t) => `${prefix}.public.${t.tenant}`).sort());
    let count = 0;
    for (const t of tenants) {
      const topic = `${prefix}.public.${t.tenant}`;
      const messages = await kcat(brokers, topic);
      const types = new Set<string>();
      for (const m of messages) {
        count++;
        const h = headersOf(m);
        const where = `${topic}@${m.partition}:${m.offset} ${h.ce_type}`;
        expect(h, where).to.include({ ce_specversion: '1.0', ce_source: `/flowsvc/${prefix}`, ce_flowsvctenant: t.tenant, 'content-type': 'application/json', ce_dataschema: `/api/asyncapi.json#/components/schemas/${h.ce_type}` });
        expect(h.ce_id, where).to.be.a('string').and.not.equal('');
        expect(Number.isNaN(Date.parse(h.ce_time!)), where).to.equal(false);
        expect(m.key, where).to.equal(h.ce_subject);
        expect(h.ce_subject === `flows/${t.flowId}` || h.ce_subject === `runs/${t.processId}` || h.ce_subject!.startsWith('documents/') && h.ce_subject!.endsWith(`/d-${t.name}`), `${where}: only this tenant's resources`).to.equal(true);
        const schema = asyncapi.components.schemas[h.ce_type!];
        expect(schema, `${where}: a type of the document`).to.not.equal(undefined);
        const validData = ajv.compile(schema!);
        const data = JSON.parse(m.payload!) as unknown;
        expect(validData(data), `${where}: ${ajv.errorsText(validData.errors)}`).to.equal(true);
        const validHeaders = ajv.compile(asyncapi.components.messages[h.ce_type!]!.headers);
        expect(validHeaders(h), `${where}: ${ajv.errorsText(validHeaders.errors)}`).to.equal(true);
        // The "done when": no field named like a password, secret, token or key hash; no secret value.
        expect([...Object.keys(h), ...keysOf(data)].filter((k) => FORBIDDEN.test(k)), where).to.deep.equal([]);
        for (const s of secrets) expect(m.payload, where).not.to.include(s);
        expect(m.payload, where).not.to.match(/scrypt|\$argon|sha256:|Sup3rSecret|@example\.test/i);
        types.add(h.ce_type!);
      }
      expect([...types].sort(), t.tenant).to.include.members(['flowsvc.flow.created.v1', 'flowsvc.flow.changed.v1', 'flowsvc.run.requested.v1', 'flowsvc.run.started.v1', 'flowsvc.run.node_completed.v1', 'flowsvc.run.completed.v1', 'flowsvc.document.changed.v1']);
      // Tenant isolation: no other tenant's flow, run or id appears in this topic at all.
      for (const other of tenants.filter((o) => o !== t)) {
        const text = JSON.stringify(messages);
        expect(text, `${topic} holds nothing of ${other.tenant}`).not.to.include(other.flowId);
        expect(text).not.to.include(other.processId);
        expect(text).not.to.include(other.tenant);
      }
    }
    expect(count).to.be.greaterThan(15);

    // Python confluent-kafka (librdkafka) + jsonschema, reading the same topics and validating against the same document.
    const { stdout } = await run(join(ROOT, '.ci/public-consumer.sh'), [brokers, asyncapiFile, ...all], { timeout: 150_000, maxBuffer: 16 * 1024 * 1024, env: process.env });
    const report = JSON.parse(stdout) as { read: number; topics: Record<string, Array<{ type: string; subject: string; tenant: string; id: string }>>; errors: string[] };
    expect(report.errors).to.deep.equal([]);
    expect(report.read, 'the Python consumer read what kcat read').to.equal(count);
    for (const t of tenants) {
      const seen = report.topics[`${prefix}.public.${t.tenant}`]!;
      expect(seen.every((s) => s.tenant === t.tenant), t.tenant).to.equal(true);
      expect(seen.some((s) => s.type === 'flowsvc.run.completed.v1' && s.subject === `runs/${t.processId}`), t.tenant).to.equal(true);
    }
  });
});
