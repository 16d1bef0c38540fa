/**
 * Agents: the tool-calling loop as the API runs it, with the offline provider (no network), on the
 * embedded configuration.
 *  a) messages/s: JSON sends (`POST …/messages`, answered when the turn is in the log), 8 sessions
 *     in parallel, each sending one message after the other;
 *  b) the service's own overhead per loop iteration, excluding the model's and the tools' time:
 *     between the end of one model call and the start of the next, minus the tool's measured
 *     duration (recording the step, the calls and the results in the session stream, the loop's
 *     bookkeeping). Turns of 10 iterations (`loop memory_search …`);
 *  c) time to first streamed byte after the model's first token: from the provider's first text
 *     delta to the client receiving the `message.delta` frame over HTTP (same process, same clock).
 * The model calls are timed by wrapping the gateway's provider (instrumentation, no change of behaviour).
 * Aims (issue 14): overhead ≤ 5 ms p99 per iteration; first byte ≤ 20 ms p99 after the first token;
 * each is printed with its ratio to the aim.
 */
import type { LlmGateway, LlmProvider } from '../../ports/llm.js';
import { registerUser } from '../support/identity.js';
import { startTestService, type TestService } from '../support/test-service.js';
import { latency, now, type Report } from './support.js';

const BENCH = 'agents';

interface ModelCall {
  start: number;
  firstDelta: number | null;
  end: number;
}

function instrument(svc: TestService, calls: ModelCall[]) {
  const llm = svc.services.llm;
  const wrapped: LlmGateway = {
    ...llm,
    credentials: (c) => llm.credentials(c),
    listModels: (c, o) => llm.listModels(c, o),
    catalogue: (p) => llm.catalogue(p),
    isKnownModel: (p, m) => llm.isKnownModel(p, m),
    async providerFor(caller, provider, options) {
      const inner = await llm.providerFor(caller, provider, options);
      const outer: LlmProvider = {
        id: inner.id,
        async complete(request) {
          const call: ModelCall = { start: now(), firstDelta: null, end: 0 };
          const onDelta = request.onDelta;
          try {
            return await inner.complete({
              ...request,
              onDelta: onDelta && ((text) => {
                call.firstDelta ??= now();
                onDelta(text);
              }),
            });
          } finally {
            call.end = now();
            calls.push(call);
          }
        },
      };
      return outer;
    },
  };
  (svc.services as { llm: LlmGateway }).llm = wrapped;
}

async function json(svc: TestService, auth: Record<string, string>, method: string, path: string, body?: unknown) {
  const res = await fetch(`${svc.baseUrl}${path}`, { method, headers: { ...auth, 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const parsed = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(parsed)}`);
  return parsed as any;
}

export async function benchAgents(report: Report): Promise<void> {
  let svc: TestService | null = null;
  try {
    svc = await startTestService('embedded', { LOG_LEVEL: 'silent', RATE_LIMIT_AUTH_PER_MINUTE: '1000' });
    const calls: ModelCall[] = [];
    instrument(svc, calls);
    const user = await registerUser(svc.baseUrl);
    const s = svc;
    const agent = (await json(s, user.auth, 'POST', '/agents', { name: 'bench', provider: 'offline', model: 'offline', tools: [{ kind: 'memory' }], limits: { maxIterations: 10 } })).agent;
    const session = async () => (await json(s, user.auth, 'POST', `/agents/${agent.id}/sessions`, {})).session.id as string;
    const send = (sessionId: string, content: string) => json(s, user.auth, 'POST', `/agents/${agent.id}/sessions/${sessionId}/messages`, { content });

    // a) messages/s
    const sessions = await Promise.all(Array.from({ length: 8 }, session));
    for (const id of sessions) await send(id, 'warm up');
    const perSession = 40;
    const t0 = now();
    await Promise.all(sessions.map(async (id) => {
      for (let i = 0; i < perSession; i++) await send(id, `message ${i}`);
    }));
    const elapsed = now() - t0;
    report.figure(BENCH, 'messages/s (offline provider, JSON, 8 sessions in parallel)', (sessions.length * perSession * 1000) / elapsed, '/s', { note: `${sessions.length * perSession} messages; each turn's history grows to ${perSession} turns` });

    // b) overhead per iteration, excluding model and tool time
    const gaps: number[] = [];
    for (let turn = 0; turn < 40; turn++) {
      const id = await session();
      calls.length = 0;
      const message = (await send(id, 'loop memory_search {"query":"coffee"}')).message;
      if (message.answer.iterations !== 10) throw new Error(`expected 10 iterations, got ${message.answer.iterations} (${message.answer.finishReason})`);
      for (let i = 0; i + 1 < calls.length; i++) {
        const tool = message.toolCalls.find((c: any) => c.iteration === i + 1);
        gaps.push(calls[i + 1].start - calls[i].end - (tool?.result?.durationMs ?? 0));
      }
    }
    const overhead = latency(gaps);
    report.figure(BENCH, 'service overhead per loop iteration p50 (excl. model and tool time)', overhead.p50, 'ms', { digits: 2, note: `${gaps.length} iterations` });
    report.figure(BENCH, 'service overhead per loop iteration p99 (excl. model and tool time)', overhead.p99, 'ms', { digits: 2, target: { op: '<=', value: 5 }, note: `ratio to the 5 ms aim: ${(overhead.p99 / 5).toFixed(2)}` });

    // c) first streamed byte after the model's first token
    const firstBytes: number[] = [];
    const streamSession = await session();
    for (let i = 0; i < 100; i++) {
      calls.length = 0;
      const res = await fetch(`${s.baseUrl}/agents/${agent.id}/sessions/${streamSession}/messages`, {
        method: 'POST',
        headers: { ...user.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `streamed answer number ${i}`, stream: true }),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      let deltaAt: number | null = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (deltaAt === null && text.includes('event: message.delta')) deltaAt = now();
      }
      const firstToken = calls[0]?.firstDelta;
      if (deltaAt === null || firstToken == null) throw new Error('no delta streamed');
      firstBytes.push(deltaAt - firstToken);
    }
    const fb = latency(firstBytes);
    report.figure(BENCH, 'first streamed byte after the model\'s first token p50', fb.p50, 'ms', { digits: 2, note: '100 streamed messages' });
    report.figure(BENCH, 'first streamed byte after the model\'s first token p99', fb.p99, 'ms', { digits: 2, target: { op: '<=', value: 20 }, note: `ratio to the 20 ms aim: ${(fb.p99 / 20).toFixed(2)}` });
  } finally {
    await svc?.stop();
  }
}
