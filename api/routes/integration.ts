import { z } from 'zod';
import { buildAsyncApi } from '../asyncapi.js';
import { defineRoute } from '../route.js';

/** The contract of the public integration events (issue 32): GET /asyncapi.json, open to anyone like the OpenAPI document. */
export const integrationRoutes = [
  defineRoute({
    method: 'GET',
    path: '/asyncapi.json',
    operationId: 'asyncApiDocument',
    summary: 'the AsyncAPI 3.0 document of the public integration events (CloudEvents per tenant on Kafka), with a JSON Schema per event type and version',
    tag: 'System',
    auth: 'none',
    responses: {
      200: {
        description: 'the AsyncAPI document; `components.schemas.<type>` is the JSON Schema each message\'s `ce_dataschema` names',
        schema: z.looseObject({
          asyncapi: z.literal('3.0.0'),
          info: z.looseObject({ title: z.string(), version: z.string() }),
          channels: z.record(z.string(), z.looseObject({ address: z.string() })),
          operations: z.record(z.string(), z.looseObject({ action: z.string() })),
          components: z.looseObject({ schemas: z.record(z.string(), z.record(z.string(), z.unknown())), messages: z.record(z.string(), z.record(z.string(), z.unknown())) }),
        }),
      },
    },
    async handler({ services }) {
      return { status: 200, body: buildAsyncApi(services.config.KAFKA_TOPIC_PREFIX, '1.0.0') };
    },
  }),
];
