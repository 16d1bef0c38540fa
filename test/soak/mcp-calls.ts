/**
 * The soak's MCP calls, made as a user would make them: a call refused while the server is being
 * reconnected (409 MCP_NOT_CONNECTED), cut by a lost connection (502 MCP_CONNECTION_CLOSED) or not
 * answered by a worker (504 MCP_NO_ANSWER) is tried again after a pause, within a budget; any other
 * answer, or the budget spent, is a final failure. The tally lets the soak assert at its end that
 * every call succeeded or was retried to success, and say how many needed a retry and why.
 */
import { call } from '../support/http.js';
import type { RegisteredUser } from '../support/identity.js';
import type { CheckResult } from './verify.js';

/** What a user may retry: states that automatic reconnection ends. */
const TRANSIENT = new Set(['409 MCP_NOT_CONNECTED', '502 MCP_CONNECTION_CLOSED', '504 MCP_NO_ANSWER']);
/** Longer than a reconnect of the soak's settings (backoff ≤ 800 ms, handshake ≤ 10 s) takes. */
const RETRY_BUDGET_MS = 30_000;
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

export interface McpTally {
  calls: number;
  firstTry: number;
  retriedToSuccess: number;
  /** Retries by the answer that caused them (`409 MCP_NOT_CONNECTED` …). */
  retriesBy: Map<string, number>;
  /** Final failures, the first few with their answer. */
  finalFailures: number;
  failureSamples: string[];
  /** Calls that failed for good while a server underneath was down (`--faults`): not counted as failures. */
  duringFaults: number;
}

export interface SoakMcp {
  serverId: string;
  owner: RegisteredUser;
  tally: McpTally;
}

export const newMcpTally = (): McpTally => ({ calls: 0, firstTry: 0, retriedToSuccess: 0, retriesBy: new Map(), finalFailures: 0, failureSamples: [], duringFaults: 0 });

/** A final failure the soak excused because a fault was on (faults.ts): moved out of the failures. */
export function excuseMcpFailure(tally: McpTally, message: string): void {
  tally.finalFailures--;
  tally.duringFaults++;
  const sample = tally.failureSamples.indexOf(message);
  if (sample >= 0) tally.failureSamples.splice(sample, 1);
}

const answerOf = (res: { status: number; body: any }) => `${res.status} ${res.body?.error?.code ?? '?'}`;

/** One `echo` call, retried while the answer is transient; throws on a final failure. */
export async function callEchoAsUser(baseUrl: string, mcp: SoakMcp): Promise<void> {
  const { tally } = mcp;
  tally.calls++;
  const started = Date.now();
  let pause = FIRST_PAUSE_MS;
  const fail = (attempt: number, answer: string) => {
    tally.finalFailures++;
    const message = `echo failed for good after ${attempt} attempt(s) in ${Date.now() - started} ms: ${answer}`;
    if (tally.failureSamples.length < 5) tally.failureSamples.push(message);
    return new Error(message);
  };
  for (let attempt = 1; ; attempt++) {
    let res: Awaited<ReturnType<typeof call>>;
    try {
      res = await call(baseUrl, 'POST', `/mcp/servers/${mcp.serverId}/tools/call`, { name: 'echo', arguments: { message: 'soak' } }, mcp.owner.auth);
    } catch (err) {
      throw fail(attempt, `no answer from the service: ${(err as Error).message}`);
    }
    if (res.status === 200 && res.body?.result?.text === 'Echo: soak') {
      if (attempt === 1) tally.firstTry++;
      else tally.retriedToSuccess++;
      return;
    }
    const answer = res.status === 200 ? `200 with text ${JSON.stringify(res.body?.result?.text)}` : answerOf(res);
    if (!TRANSIENT.has(answer) || Date.now() - started + pause > RETRY_BUDGET_MS) throw fail(attempt, `${answer}: ${res.text.slice(0, 200)}`);
    tally.retriesBy.set(answer, (tally.retriesBy.get(answer) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, pause));
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  }
}

/** The end check: every call of the mix answered, at once or after retries. */
export function mcpCheck(tally: McpTally): CheckResult {
  const problems = [...tally.failureSamples];
  if (tally.calls === 0) problems.push('no MCP call was made: nothing was checked');
  if (tally.finalFailures > problems.length) problems.push(`… ${tally.finalFailures - problems.length} more`);
  const ended = tally.firstTry + tally.retriedToSuccess + tally.finalFailures + tally.duringFaults;
  if (ended !== tally.calls) problems.push(`${tally.calls} calls started, ${ended} ended`);
  return { name: 'every MCP call succeeded or was retried to success', checked: tally.calls, problems };
}

/** What the soak prints about MCP: the tally, and the server as it stands (a loss leaves reconnect attempts behind). */
export async function reportMcp(baseUrl: string, mcp: SoakMcp): Promise<string[]> {
  const t = mcp.tally;
  const retries = [...t.retriesBy].map(([answer, n]) => `${n} × ${answer}`).join(', ') || 'none';
  const res = await call(baseUrl, 'GET', `/mcp/servers/${mcp.serverId}`, undefined, mcp.owner.auth);
  const s = res.body?.server;
  const lines = [
    `MCP calls: ${t.calls}, ${t.firstTry} at the first try, ${t.retriedToSuccess} retried to success, ${t.finalFailures} failed${t.duringFaults ? `, ${t.duringFaults} failed during faults` : ''}; retries: ${retries}`,
    `MCP server after the load: ${s ? `${s.state}, reconnect attempts ${s.reconnect?.attempts}, last error ${JSON.stringify(s.lastError)}` : `GET answered ${res.status}`}`,
  ];
  if (t.finalFailures > 0) {
    const history = await call(baseUrl, 'GET', `/mcp/servers/${mcp.serverId}/history?limit=5`, undefined, mcp.owner.auth);
    lines.push(`MCP history (latest): ${history.text.slice(0, 600)}`);
  }
  return lines;
}
