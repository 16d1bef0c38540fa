/**
 * The scenarios scenario-load.ts runs in its worker thread: each one is a client's whole
 * interaction, throwing on any answer but the expected one.
 */
import type { BenchClient } from './scenario-load.js';

/** A plain flow run, synchronous: `params.flowId`, inputs `{ order }`. */
async function plainRun(client: BenchClient, params: Record<string, string>): Promise<void> {
  const res = await client.call('POST', `/flows/${params.flowId}/run`, { inputs: { order: 'o-1' } });
  if (res.status !== 200 || res.body?.status !== 'completed') throw new Error(`run answered ${res.status}: ${res.text.slice(0, 300)}`);
}

/**
 * A workflow of `params.flowId` (transform → wait_signal "approve" → transform) from creation to
 * WorkflowCompleted: create it, signal it, then long-poll its history until it completed.
 */
async function workflowToCompletion(client: BenchClient, params: Record<string, string>): Promise<void> {
  const created = await client.call('POST', '/workflows', { flowId: params.flowId, input: { order: 'o-1' } });
  if (created.status !== 201) throw new Error(`POST /workflows answered ${created.status}: ${created.text.slice(0, 300)}`);
  const id = created.body.workflow.id as string;
  const signal = await client.call('POST', `/workflows/${id}/signal`, { name: 'approve', payload: { by: 'bench' } });
  if (signal.status !== 202) throw new Error(`signal answered ${signal.status}: ${signal.text.slice(0, 300)}`);
  let after = -1;
  for (;;) {
    const h = await client.call('GET', `/workflows/${id}/history?afterEventId=${after}&wait=true&waitMs=10000&limit=1000`);
    if (h.status !== 200) throw new Error(`history answered ${h.status}: ${h.text.slice(0, 300)}`);
    const events = h.body.events as Array<{ type: string; data: { result?: unknown } }>;
    const end = events.find((e) => /^Workflow(Completed|Failed|Canceled|Terminated|TimedOut)$/.test(e.type));
    if (end) {
      if (end.type !== 'WorkflowCompleted' || end.data.result !== 'approved o-1') throw new Error(`workflow ended ${end.type}: ${JSON.stringify(end.data)}`);
      return;
    }
    if (events.length === 0) throw new Error(`workflow ${id} did not complete within 10 s`);
    after = h.body.lastEventId as number;
  }
}

/** A sync run through the flow's public trigger (`params.flowId`; the key in the client's headers). */
async function publicTrigger(client: BenchClient, params: Record<string, string>): Promise<void> {
  const res = await client.call('POST', `/public/flows/${params.flowId}/trigger`, { topic: 'bench' });
  if (res.status !== 200) throw new Error(`trigger answered ${res.status}: ${res.text.slice(0, 300)}`);
}

let signalSeq = 0;
/** One signal "ping" into the workflows of `params.ids` (comma-separated), round robin; 202 = recorded. */
async function signalRoundRobin(client: BenchClient, params: Record<string, string>): Promise<void> {
  const ids = params.ids.split(',');
  const n = signalSeq++;
  const res = await client.call('POST', `/workflows/${ids[n % ids.length]}/signal`, { name: 'ping', payload: { n } });
  if (res.status !== 202) throw new Error(`signal answered ${res.status}: ${res.text.slice(0, 300)}`);
}

export const scenarios = { plainRun, publicTrigger, workflowToCompletion, signalRoundRobin };
export type ScenarioName = keyof typeof scenarios;
