import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Parser } from '@asyncapi/parser';
import { Ajv } from 'ajv';
import { encodeCloudEvent } from '../../infra/integration/kafka.js';
import type { IntegrationEvent } from '../../domain/integration/events.js';
import { buildAsyncApi, publicDataSchemas } from '../../api/asyncapi.js';
import { breakingChanges } from '../support/schema-compat.js';

const snapshot = JSON.parse(readFileSync(new URL('../../docs/asyncapi/schemas-v1.json', import.meta.url), 'utf8')) as Record<string, Record<string, unknown>>;

describe('the AsyncAPI document of the public events (issue 32)', function () {
  this.timeout(30_000);

  it('is a valid AsyncAPI 3.0 document for @asyncapi/parser, with no error or warning', async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(buildAsyncApi('flowsvc', '1.0.0')));
    // Severity 0 error, 1 warning; 2–3 are hints (e.g. "3.1.0 exists").
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code} ${d.message} at ${d.path.join('/')}`)).to.deep.equal([]);
    expect(document, 'parsed').to.not.equal(undefined);
    expect(document!.messages().all().map((m) => m.id()).sort()).to.deep.equal(Object.keys(publicDataSchemas()).sort());
  });

  it('still has every type of the snapshot, and none changed in a way that breaks its consumers (else: a new version)', () => {
    const current = publicDataSchemas();
    const problems: string[] = [];
    for (const [type, before] of Object.entries(snapshot)) {
      if (!current[type]) problems.push(`${type}: no longer published (keep it until its consumers moved on, or bump to a new version and keep this one)`);
      else problems.push(...breakingChanges(before, current[type]!).map((p) => `${type} ${p}`));
    }
    expect(problems, 'breaking changes: publish a new version (.v2) instead').to.deep.equal([]);
    const unrecorded = Object.keys(current).filter((t) => !snapshot[t]);
    expect(unrecorded, 'new types: run npm run asyncapi:snapshot and commit docs/asyncapi/schemas-v1.json').to.deep.equal([]);
  });

  it('a message encoded by the Kafka adapter has the headers the document describes, with or without PUBLIC_URL', () => {
    const doc = buildAsyncApi('flowsvc', '1.0.0');
    const event: IntegrationEvent = {
      id: 'e1', type: 'flowsvc.run.started.v1', subject: 'runs/p1', time: '2026-01-01T00:00:00.000Z', tenant: 'org.o1',
      dataschema: '/api/asyncapi.json#/components/schemas/flowsvc.run.started.v1', data: { processId: 'p1', flowId: 'f1', at: '2026-01-01T00:00:00.000Z' },
    };
    const valid = new Ajv({ strict: false }).compile(doc.components.messages['flowsvc.run.started.v1']!.headers);
    for (const base of ['', 'https://flows.example.com/']) {
      const message = encodeCloudEvent(event, '/flowsvc/flowsvc', base);
      expect(valid(message.headers), JSON.stringify(valid.errors)).to.equal(true);
      expect(message.key).to.equal('runs/p1');
      expect(JSON.parse(String(message.value))).to.deep.equal(event.data);
    }
    expect(encodeCloudEvent(event, 's', 'https://flows.example.com/').headers!.ce_dataschema).to.equal('https://flows.example.com/api/asyncapi.json#/components/schemas/flowsvc.run.started.v1');
    expect(valid({ ...encodeCloudEvent(event, 's').headers, ce_dataschema: '/api/asyncapi.json#/components/schemas/flowsvc.run.completed.v1' }), 'another type\'s schema').to.equal(false);
  });

  it('the compatibility check refuses a removed, retyped or no-longer-required field and an added enum value; allows an added field', () => {
    const v1 = { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'integer' }, s: { type: 'string', enum: ['x', 'y'] } } };
    expect(breakingChanges(v1, { ...v1, properties: { a: { type: 'string' }, s: v1.properties.s }, required: ['a'] })).to.include.members(['/b: removed', '/b: no longer required']);
    expect(breakingChanges(v1, { ...v1, properties: { ...v1.properties, b: { type: 'string' } } })).to.deep.equal(['/b: type "integer" became "string"']);
    expect(breakingChanges(v1, { ...v1, properties: { ...v1.properties, s: { type: 'string', enum: ['x', 'y', 'z'] } } })).to.deep.equal(['/s: enum values added ["z"]']);
    expect(breakingChanges(v1, { ...v1, properties: { ...v1.properties, c: { type: 'boolean' } }, required: ['a', 'b', 'c'] })).to.deep.equal([]);
    expect(breakingChanges(v1, { ...v1, properties: { ...v1.properties, a: { type: 'string', description: 'now described' } } })).to.deep.equal([]);
  });
});
