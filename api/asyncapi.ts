import { z } from 'zod';
import { INTEGRATION_EVENT_TYPES, integrationEventSchemas, type IntegrationEventType } from '../domain/integration/events.js';

/**
 * The AsyncAPI 3.0 document of the public integration events (issue 32), built from their zod
 * schemas: one channel (`<prefix>.public.{tenant}`), one message per event type and version, and
 * the JSON Schema of each type's data under `components.schemas.<type>` (the `ce_dataschema` of
 * every message points there). Objects do not forbid extra properties: a field may be added to a
 * version, and a consumer must ignore the fields it does not know.
 */

export const ASYNCAPI_VERSION = '3.0.0';
const TENANT_DESCRIPTION = '`org.<orgId>` for an organization\'s resources, `user.<userId>` for a personal account\'s';

/** JSON Schema (draft 07, AsyncAPI's default schema format) of one public type's data. */
export function dataSchemaOf(type: IntegrationEventType): Record<string, unknown> {
  const { $schema: _drop, ...schema } = z.toJSONSchema(integrationEventSchemas[type], { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  return schema;
}

/** Every public type's data schema, keyed by type: what docs/asyncapi/schemas-v1.json snapshots. */
export function publicDataSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(INTEGRATION_EVENT_TYPES.map((t) => [t, dataSchemaOf(t)]));
}

function headersOf(type: IntegrationEventType) {
  const text = { type: 'string' };
  return {
    type: 'object',
    required: ['ce_specversion', 'ce_id', 'ce_type', 'ce_source', 'ce_subject', 'ce_time', 'ce_dataschema', 'ce_flowsvctenant', 'content-type'],
    properties: {
      ce_specversion: { type: 'string', const: '1.0' },
      ce_id: { ...text, description: 'unique per event, the same on a redelivery: de-duplicate by it' },
      ce_type: { type: 'string', const: type },
      ce_source: { ...text, description: '`/flowsvc/<KAFKA_TOPIC_PREFIX>`' },
      ce_subject: { ...text, description: '`flows/<flowId>`, `runs/<processId>` or `workflows/<workflowId>`; also the message key' },
      ce_time: { ...text, format: 'date-time' },
      ce_dataschema: {
        type: 'string',
        pattern: `^(https?://[^#]+)?/api/asyncapi\\.json#/components/schemas/${type.replace(/\./g, '\\.')}$`,
        description: 'this JSON Schema: `<PUBLIC_URL>/api/asyncapi.json#/components/schemas/<type>` (the path alone when PUBLIC_URL is unset)',
      },
      ce_flowsvctenant: { ...text, description: TENANT_DESCRIPTION },
      'content-type': { type: 'string', const: 'application/json' },
    },
  };
}

export function buildAsyncApi(topicPrefix: string, version: string) {
  const messages = Object.fromEntries(
    INTEGRATION_EVENT_TYPES.map((type) => [
      type,
      {
        name: type,
        title: type,
        summary: integrationEventSchemas[type].description ?? type,
        contentType: 'application/json',
        headers: headersOf(type),
        payload: { $ref: `#/components/schemas/${type}` },
        bindings: { kafka: { key: { type: 'string', description: 'the CloudEvents subject' }, bindingVersion: '0.5.0' } },
      },
    ]),
  );
  return {
    asyncapi: ASYNCAPI_VERSION,
    info: {
      title: 'Flow automation service: public integration events',
      version,
      description:
        'CloudEvents 1.0 in Kafka binary content mode: the data is the message value (JSON), the attributes are `ce_*` headers. ' +
        'One topic per tenant; delivery is at least once (de-duplicate by `ce_id`); one subject\'s events keep their order. ' +
        'A breaking change to a type is a new type with the next version (`.v2`). The internal `<prefix>.events.*` topics are private.',
    },
    defaultContentType: 'application/json',
    servers: {
      kafka: { host: '{brokers}', protocol: 'kafka', description: 'the brokers of KAFKA_BROKERS', variables: { brokers: { default: 'localhost:9092', description: 'host:port of a broker' } } },
    },
    channels: {
      tenantEvents: {
        address: `${topicPrefix}.public.{tenant}`,
        title: 'one tenant\'s public events',
        description: 'Grant a tenant\'s principal READ on its own topic only (a literal or prefixed ACL on this name).',
        parameters: { tenant: { description: TENANT_DESCRIPTION } },
        messages: Object.fromEntries(INTEGRATION_EVENT_TYPES.map((t) => [t, { $ref: `#/components/messages/${t}` }])),
      },
    },
    operations: {
      publishTenantEvents: {
        action: 'send',
        channel: { $ref: '#/channels/tenantEvents' },
        messages: INTEGRATION_EVENT_TYPES.map((t) => ({ $ref: `#/channels/tenantEvents/messages/${t}` })),
      },
    },
    components: { schemas: publicDataSchemas(), messages },
  };
}
