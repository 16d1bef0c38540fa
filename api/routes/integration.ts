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
    responses: { 200: { description: 'application/json: the AsyncAPI document' } },
    async handler({ services }) {
      return { status: 200, body: buildAsyncApi(services.config.KAFKA_TOPIC_PREFIX, '1.0.0') };
    },
  }),
];
