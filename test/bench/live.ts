/**
 * Live runs (issue 34 item 4): how soon a client following a run over SSE sees it. For each of N
 * async runs of a 2-node flow (transform → delay 20 ms → transform), on the embedded default:
 *   202 → first frame            the request answered, then GET /processes/{id}/stream opened: the
 *                                 time to its first frame (run.requested), aim ≤ 20 ms p50
 *   appended → frame (live lag)   for the frames that arrive while the run goes on, the time from
 *                                 the event's occurredAt to the frame's arrival (same clock)
 * Reference in the same run: GET /processes/{id} (the run read from its stream, JSON) as a ratio.
 */
import { call } from '../support/http.js';
import { registerUser } from '../support/identity.js';
import { startTestService } from '../support/test-service.js';
import { latency, now, type Report } from './support.js';

const BENCH = 'live runs';

export async function benchLive(report: Report, runs = 150): Promise<void> {
  const svc = await startTestService('embedded');
  try {
    const user = await registerUser(svc.baseUrl);
    const flow = await call(svc.baseUrl, 'POST', '/flows', { name: 'live bench' }, user.auth);
    const flowId = flow.body.flow.id as string;
    const ids: string[] = [];
    for (const [x, data] of [[0, { nodeType: 'transform', template: 'a' }], [200, { nodeType: 'delay', delayMs: 20 }], [400, { nodeType: 'transform', template: '{{previous}}b' }]] as const) {
      const res = await call(svc.baseUrl, 'POST', `/flows/${flowId}/nodes`, { type: 'custom', position: { x, y: 0 }, data }, user.auth);
      ids.push(res.body.node.id);
    }
    for (let i = 1; i < ids.length; i++) await call(svc.baseUrl, 'POST', `/flows/${flowId}/connections`, { source: ids[i - 1], target: ids[i] }, user.auth);

    const firstFrame: number[] = [];
    const liveLag: number[] = [];
    const plainRead: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = await call(svc.baseUrl, 'POST', `/flows/${flowId}/run`, { inputs: {}, async: true }, user.auth);
      const processId = started.body.processId as string;
      const t0 = now();
      const res = await fetch(`${svc.baseUrl}/processes/${processId}/stream`, { headers: user.auth });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      let first = true;
      for (let done = false; !done; ) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!data || !/^id: /m.test(frame)) continue;
          const event = JSON.parse(data) as { type: string; occurredAt: string };
          if (first) firstFrame.push(now() - t0);
          else if (event.type !== 'RunRequested') liveLag.push(Math.max(0, Date.now() - Date.parse(event.occurredAt)));
          first = false;
          if (event.type === 'RunCompleted' || event.type === 'RunFailed') done = true;
        }
      }
      await reader.cancel().catch(() => undefined);
      const r0 = now();
      await call(svc.baseUrl, 'GET', `/processes/${processId}`, undefined, user.auth);
      plainRead.push(now() - r0);
    }
    const f = latency(firstFrame);
    const lag = latency(liveLag);
    const read = latency(plainRead);
    const note = `${runs} runs; reference GET /processes/{id} p50 ${read.p50.toFixed(1)} ms, first frame = ${(f.p50 / read.p50).toFixed(1)}× it`;
    report.figure(BENCH, '202 → first frame, p50', f.p50, 'ms', { digits: 1, target: { op: '<=', value: 20 }, note });
    report.figure(BENCH, '202 → first frame, p99', f.p99, 'ms', { digits: 1 });
    report.figure(BENCH, 'appended → frame (live), p50', lag.p50, 'ms', { digits: 1, note: `${liveLag.length} frames` });
    report.figure(BENCH, 'appended → frame (live), p99', lag.p99, 'ms', { digits: 1 });
  } finally {
    await svc.stop();
  }
}
