import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { executeFlowCommand } from '../../commands/flows.js';
import { flowStreamId } from '../../domain/flows/index.js';
import { call } from '../support/http.js';
import { answer, apiClient } from '../support/api-client.js';
import type { RequestBody } from '../../client/index.js';
import type { TestService } from '../support/test-service.js';

/** Helpers shared by the flows and nodes API tests. */
export type Res = Awaited<ReturnType<typeof call>>;
export type Auth = { auth: Record<string, string> };

export function expectError(res: Res, status: number, code?: string, field?: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body?.success, res.text).to.equal(false);
  if (code) expect(res.body.error.code, res.text).to.equal(code);
  if (field) expect(res.body.error.details.fields.map((f: { field: string }) => f.field), res.text).to.include(field);
}

export const llmData = (prompt = 'Answer {{inputs.question}}') => ({ nodeType: 'llm', llm: 'openai', model: 'gpt-4o', prompt });
export const transformNode = (x = 0) => ({ type: 'custom', position: { x, y: 0 }, data: { nodeType: 'transform', template: '{{previous}}' } });

/** Calls as a user, creates flows and nodes (expecting success), and checks that refusals append nothing. */
export function flowClient(svc: () => TestService) {
  const as = (user: Auth, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(svc().baseUrl, method, path, body, { ...user.auth, ...headers });
  /** The generated typed client (`client/`) as a user. */
  const api = (user: Auth) => apiClient(svc().baseUrl, user.auth);
  return {
    as,
    api,
    async newFlow(user: Auth, name = `flow ${Math.random().toString(36).slice(2, 8)}`): Promise<string> {
      const res = await answer(api(user).POST('/flows', { body: { name } }));
      expect(res.status, res.text).to.equal(201);
      return res.data!.flow.id;
    },
    async addNode(user: Auth, flowId: string, body: unknown = { type: 'custom', position: { x: 0, y: 0 }, data: llmData() }) {
      const res = await answer(api(user).POST('/flows/{flowId}/nodes', { params: { path: { flowId } }, body: body as RequestBody<'addNode'> }));
      expect(res.status, res.text).to.equal(201);
      return res.body.node;
    },
    async getFlow(user: Auth, flowId: string) {
      const res = await answer(api(user).GET('/flows/{flowId}', { params: { path: { flowId } } }));
      expect(res.status, res.text).to.equal(200);
      return res.body.flow;
    },
    /** The refusal must leave the log as it was. */
    async refusedWithoutEvents(send: () => Promise<Res>, status: number, code?: string, field?: string) {
      const head = await svc().services.eventStore.headPosition();
      const res = await send();
      expectError(res, status, code, field);
      expect(await svc().services.eventStore.headPosition(), 'nothing appended').to.equal(head);
      return res;
    },
    /** As the run engine will: RecordNodeExecution through the command executor, then wait for the projection. */
    async recordRun(flowId: string, nodeId: string, entryId: string, output: unknown = `out ${entryId}`) {
      const services = svc().services;
      const context = { actorId: null, orgId: null, workspaceId: null, correlationId: randomUUID(), causationId: null, requestId: null, now: new Date() };
      const result = await executeFlowCommand(services.eventStore, context, flowId, {
        type: 'RecordNodeExecution',
        nodeId,
        entryId,
        processId: `run-${entryId}`,
        status: 'completed',
        output,
        usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7, cost: 0.0001 },
        executionTime: 12,
      });
      if (result.position !== null) expect(await services.projections.waitFor(result.position, flowStreamId(flowId), 10_000)).to.equal(true);
    },
  };
}
