import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from '../support/http.js';
import { registerUser, type RegisteredUser } from '../support/identity.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { availableModes, startTestService, waitUntil, type TestService } from '../support/test-service.js';
import { newConfigHome, spawnFlowctl, TcpProxy, type FlowctlProcess } from './support.js';

/**
 * `flowctl remote connect` as a real child process: the web side (this test, over the API) sends
 * prompts, the CLI answers them with a small agent script.
 */

const AGENT = `
import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.setEncoding('utf8').on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  const text = input.trim();
  if (process.env.AGENT_LOG) appendFileSync(process.env.AGENT_LOG, (process.env.FLOWCTL_PROMPT_ID || 'local') + '\\n');
  process.stderr.write('thinking about ' + text + '\\n');
  process.stdout.write('answer: ');
  if (text.includes('slow')) await new Promise((r) => setTimeout(r, 60_000));
  await new Promise((r) => setTimeout(r, Number(process.env.AGENT_DELAY_MS || 100)));
  process.stdout.write(text + '\\n');
  process.exit(text.includes('fail') ? 3 : 0);
});
`;

/** An agent that speaks Claude Code's stream-json: a session it keeps across prompts, thinking, a tool call, its result, the answer. */
const STREAM_AGENT = `
let input = '';
process.stdin.setEncoding('utf8').on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const resumed = process.env.FLOWCTL_AGENT_SESSION_ID;
  const session = resumed || 'sess-' + process.env.FLOWCTL_PROMPT_ID;
  const line = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
  line({ type: 'system', subtype: 'init', session_id: session });
  line({ type: 'assistant', message: { content: [{ type: 'thinking', thinking: 'pondering ' + input.trim(), signature: 'sig' }, { type: 'tool_use', id: 't1', name: 'Read', input: { path: 'a.txt' } }] } });
  line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file body' }] } });
  line({ type: 'assistant', message: { content: [{ type: 'text', text: 'partial text' }] } });
  const seen = [process.env.FLOWCTL_RESUME_ARGS || '-', process.env.ANTHROPIC_BASE_URL || '-', process.env.ANTHROPIC_API_KEY ? 'key' : '-'].join(' | ');
  line({ type: 'result', subtype: 'success', is_error: false, result: 'done: ' + input.trim() + ' [' + seen + ']', session_id: session });
});
`;

function agentFiles() {
  const dir = mkdtempSync(join(tmpdir(), 'flowctl-agent-'));
  const script = join(dir, 'agent.mjs');
  writeFileSync(script, AGENT);
  return { dir, log: join(dir, 'agent.log'), command: `"${process.execPath}" "${script}"` };
}

async function cliToken(baseUrl: string, user: RegisteredUser) {
  const res = await call(baseUrl, 'POST', '/cli/tokens', { name: 'remote test' }, user.auth);
  expect(res.status, res.text).to.equal(201);
  return res.body.token as string;
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);

async function connectedTerminal(cli: FlowctlProcess) {
  const [line] = await cli.waitFor(/^\{"event":"connected".*$/m, 'stdout', 30_000);
  return JSON.parse(line) as { terminalId: string; reused: boolean };
}

describe('flowctl remote connect', function () {
  this.timeout(120_000);

  describe('a session against an in-process service', () => {
    let svc: TestService;
    let alice: RegisteredUser;
    let token: string;
    const cleanup: string[] = [];
    const web = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, alice.auth);
    const prompt = async (tid: string, pid: string) => (await web('GET', `/remote/terminals/${tid}/prompts/${pid}`)).body.prompt;
    const answered = (tid: string, pid: string) => waitUntil(`prompt ${pid} answered`, async () => ((await prompt(tid, pid))?.answer ? prompt(tid, pid) : null), 30_000);
    async function thread(tid: string) {
      const items: any[] = [];
      let cursor: string | null = null;
      do {
        const page = await web('GET', `/remote/terminals/${tid}/thread?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(page.status, page.text).to.equal(200);
        items.push(...page.body.items);
        cursor = page.body.nextCursor;
      } while (cursor);
      return items;
    }

    before(async () => {
      svc = await startTestService('embedded', { REMOTE_TERMINAL_LEASE_SECONDS: '3', REMOTE_PROMPT_LEASE_SECONDS: '3' });
      alice = await registerUser(svc.baseUrl);
      token = await cliToken(svc.baseUrl, alice);
    });
    after(async () => {
      await svc?.stop();
      for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
    });

    it('answers web prompts with the agent (steps, exit status → answer status), cancels, mirrors local prompts, and reconnects to the same terminal', async () => {
      const home = newConfigHome();
      const agent = agentFiles();
      cleanup.push(home, agent.dir);
      const env = { url: svc.baseUrl, configHome: home, extra: { FLOWCTL_TOKEN: token, AGENT_LOG: agent.log } };
      const cli = spawnFlowctl(['remote', 'connect', '--name', 'laptop', '--agent', agent.command, '--wait', '5', '--json', '--local'], env, { stdin: 'pipe' });
      try {
        const { terminalId: tid, reused } = await connectedTerminal(cli);
        expect(reused).to.equal(false);
        const listed = (await web('GET', '/remote/terminals')).body.items.find((t: { id: string }) => t.id === tid);
        expect(listed).to.include({ name: 'laptop', status: 'ONLINE', connected: true });
        expect(listed.capabilities).to.include('agent');

        const hello = (await web('POST', `/remote/terminals/${tid}/prompts`, { content: 'hello there' })).body.prompt;
        const done = await answered(tid, hello.id);
        expect(done.status).to.equal('completed');
        expect(done.answer).to.include({ content: 'answer: hello there', status: 'completed' });
        const entries = (await thread(tid)).filter((e) => e.promptId === hello.id);
        const steps = entries.filter((e) => e.type === 'step');
        expect(steps[0]).to.include({ kind: 'status', clientSeq: 0 });
        expect(steps.filter((s) => s.kind === 'output').map((s) => s.content).join('')).to.equal('answer: hello there\n');
        expect(steps.some((s) => s.kind === 'status' && s.content.includes('thinking about hello there'))).to.equal(true);
        expect(entries.filter((e) => e.type === 'answer')).to.have.length(1);

        const failing = (await web('POST', `/remote/terminals/${tid}/prompts`, { content: 'please fail' })).body.prompt;
        expect((await answered(tid, failing.id)).answer).to.include({ status: 'failed', content: 'answer: please fail' });

        const slow = (await web('POST', `/remote/terminals/${tid}/prompts`, { content: 'a slow one' })).body.prompt;
        // Cancel once the agent has written its first output, so the partial answer is known.
        await waitUntil('slow prompt running with output', async () =>
          (await prompt(tid, slow.id)).status === 'running' && (await thread(tid)).some((e) => e.promptId === slow.id && e.type === 'step' && e.kind === 'output'),
        );
        expect((await web('POST', `/remote/terminals/${tid}/prompts/${slow.id}/cancel`)).status).to.equal(200);
        const cancelled = await answered(tid, slow.id);
        expect(cancelled.status).to.equal('cancelled');
        expect(cancelled.answer).to.include({ status: 'cancelled', content: 'answer: ' });
        expect(jsonLines(cli.stdout()).some((e) => e.event === 'cancelled' && e.promptId === slow.id)).to.equal(true);

        // Typed locally: answered here and mirrored into the thread as user + assistant.
        cli.child.stdin!.write('typed at the keyboard\n');
        const mirrored = await waitUntil('mirrored entries', async () => {
          const m = (await thread(tid)).filter((e) => e.type === 'mirror');
          return m.length >= 2 ? m : null;
        });
        expect(mirrored.map((e) => [e.role, e.content])).to.deep.equal([['user', 'typed at the keyboard'], ['assistant', 'answer: typed at the keyboard']]);

        const ran = readFileSync(agent.log, 'utf8').trim().split('\n');
        expect(ran).to.deep.equal([hello.id, failing.id, slow.id, 'local-0']);
      } finally {
        cli.child.kill('SIGINT');
      }
      const ended = await cli.exited;
      expect(ended.code).to.equal(130);
      const events = jsonLines(ended.stdout);
      const tid = events.find((e) => e.event === 'connected')!.terminalId;
      expect(events.at(-1)).to.include({ event: 'disconnected' });
      const after = (await web('GET', `/remote/terminals/${tid}`)).body.terminal;
      expect(after).to.include({ connected: false, status: 'OFFLINE' });

      // A prompt sent while it is offline waits; the same name on this machine reconnects the same terminal and gets it.
      const queued = (await web('POST', `/remote/terminals/${tid}/prompts`, { content: 'sent while away' })).body.prompt;
      expect(queued.status).to.equal('queued');
      const again = spawnFlowctl(['remote', 'connect', '--name', 'laptop', '--agent', agent.command, '--wait', '5', '--json', '--no-local'], env);
      try {
        const second = await connectedTerminal(again);
        expect(second).to.include({ terminalId: tid, reused: true });
        expect((await answered(tid, queued.id)).answer).to.include({ status: 'completed', content: 'answer: sent while away' });
      } finally {
        again.child.kill('SIGTERM');
      }
      expect((await again.exited).code).to.equal(0);
    });
  });

  for (const mode of availableModes()) describe(`an agent that speaks stream-json (issue 36 item 6, ${mode})`, () => {
    let svc: TestService;
    let alice: RegisteredUser;
    let token: string;
    const dirs: string[] = [];
    before(async () => {
      svc = await startTestService(mode, { REMOTE_TERMINAL_LEASE_SECONDS: '3', REMOTE_PROMPT_LEASE_SECONDS: '3' });
      alice = await registerUser(svc.baseUrl);
      token = await cliToken(svc.baseUrl, alice);
    });
    after(async () => {
      await svc?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('records thinking, tool and output steps, answers with the result, resumes its session on the next prompt and is pointed at the CLI proxy when asked', async () => {
      const web = (method: string, path: string, body?: unknown) => call(svc.baseUrl, method, path, body, alice.auth);
      const home = newConfigHome();
      const dir = mkdtempSync(join(tmpdir(), 'flowctl-stream-agent-'));
      dirs.push(home, dir);
      writeFileSync(join(dir, 'agent.mjs'), STREAM_AGENT);
      const command = `"${process.execPath}" "${join(dir, 'agent.mjs')}"`;
      const cli = spawnFlowctl(['remote', 'connect', '--name', 'streamer', '--agent', command, '--agent-format', 'stream-json', '--use-proxy', '--wait', '5', '--json', '--no-local'], { url: svc.baseUrl, configHome: home, extra: { FLOWCTL_TOKEN: token } });
      try {
        const { terminalId: tid } = await connectedTerminal(cli);
        const ask = async (content: string) => {
          const p = (await web('POST', `/remote/terminals/${tid}/prompts`, { content })).body.prompt;
          return waitUntil(`prompt ${p.id} answered`, async () => {
            const got = (await web('GET', `/remote/terminals/${tid}/prompts/${p.id}`)).body.prompt;
            return got?.answer ? got : null;
          }, 30_000);
        };
        const first = await ask('first');
        expect(first.answer.status).to.equal('completed');
        expect(first.answer.content).to.match(/^done: first \[- \| .*\/api\/cli\/llm \| key\]$/);
        const steps = (await web('GET', `/remote/terminals/${tid}/thread?limit=100`)).body.items.filter((e: any) => e.promptId === first.id && e.type === 'step');
        const byKind = (kind: string) => steps.filter((e: any) => e.kind === kind).map((e: any) => e.content);
        expect(byKind('thinking')).to.deep.equal(['pondering first']);
        expect(byKind('tool')).to.deep.equal(['Read {"path":"a.txt"}', 'result: file body']);
        expect(byKind('output')).to.deep.equal(['partial text']);
        // The next prompt resumes the agent's session: its context is kept.
        const second = await ask('second');
        expect(second.answer.content).to.include(`[--resume sess-${first.id} |`);
      } finally {
        cli.child.kill('SIGTERM');
      }
      await cli.exited;
    });
  });

  describe('through a network that drops and a service that is killed and restarted', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'flowctl-remote-svc-'));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      JWT_SECRET: `remote-cli-${randomBytes(8).toString('hex')}-0123456789abcdef`,
      RATE_LIMIT_AUTH_PER_MINUTE: '1000',
      REMOTE_TERMINAL_LEASE_SECONDS: '3',
      REMOTE_PROMPT_LEASE_SECONDS: '2',
    };
    let service: ServiceProcess;
    let proxy: TcpProxy;
    let cli: FlowctlProcess | null = null;
    const agent = agentFiles();
    const home = newConfigHome();

    after(async () => {
      cli?.child.kill('SIGKILL');
      await proxy?.stop();
      if (service && service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGTERM');
        await service.exited;
      }
      for (const dir of [dataDir, agent.dir, home]) rmSync(dir, { recursive: true, force: true });
    });

    it('every prompt is answered exactly once from the web\'s point of view', async () => {
      service = await startServiceProcess(env);
      proxy = await new TcpProxy(Number(new URL(service.baseUrl).port)).start();
      const alice = await registerUser(service.baseUrl);
      const token = await cliToken(service.baseUrl, alice);
      const web = (method: string, path: string, body?: unknown) => call(service.baseUrl, method, path, body, alice.auth);
      const getPrompt = async (tid: string, pid: string) => (await web('GET', `/remote/terminals/${tid}/prompts/${pid}`)).body?.prompt;
      const answered = (tid: string, pid: string) => waitUntil(`prompt ${pid} answered`, async () => ((await getPrompt(tid, pid).catch(() => null))?.answer ? getPrompt(tid, pid) : null), 60_000);
      const running = (tid: string, pid: string) => waitUntil(`prompt ${pid} running`, async () => ['running', 'completed'].includes((await getPrompt(tid, pid))?.status), 30_000);

      cli = spawnFlowctl(['remote', 'connect', '--name', 'flaky', '--agent', agent.command, '--wait', '5', '--json', '--no-local'], {
        url: proxy.url,
        configHome: home,
        extra: { FLOWCTL_TOKEN: token, AGENT_LOG: agent.log, AGENT_DELAY_MS: '1500' },
      });
      const { terminalId: tid } = await connectedTerminal(cli);
      /** Cuts every connection, then waits for flowctl to open a new one (it noticed and came back). */
      const dropAndAwaitReconnect = async () => {
        const before = proxy.connections;
        proxy.dropAll();
        await waitUntil('flowctl to reconnect through the proxy', async () => proxy.connections > before, 30_000, 10);
      };
      const sent: Array<{ id: string; content: string }> = [];
      const send = async (content: string) => {
        const res = await web('POST', `/remote/terminals/${tid}/prompts`, { content });
        expect(res.status, res.text).to.equal(202);
        sent.push({ id: res.body.prompt.id, content });
        return res.body.prompt.id as string;
      };

      // 1. A plain prompt.
      await answered(tid, await send('one'));

      // 2. Connections cut twice while the agent works.
      const two = await send('two');
      await running(tid, two);
      await dropAndAwaitReconnect();
      proxy.dropAll();
      await answered(tid, two);

      // 3. The network is down for 3 s mid-prompt (new connections refused too).
      const three = await send('three');
      await running(tid, three);
      proxy.setDown(true);
      // The outage itself (fault injection, not a wait): longer than the agent's 1.5 s, so its answer must get through after it.
      await new Promise((r) => setTimeout(r, 3000));
      proxy.setDown(false);
      await answered(tid, three);

      // 4. Connections cut right as a prompt is handed out: the delivery may be lost on the wire; it comes again after its lease.
      const four = await send('four');
      await dropAndAwaitReconnect();
      proxy.dropAll();
      await answered(tid, four);

      // 5. The service is killed mid-prompt and restarted (same data) on another port.
      const five = await send('five');
      await running(tid, five);
      service.child.kill('SIGKILL');
      await service.exited;
      // Restarted only once flowctl has found the service gone: a connection of its own to the dead port.
      const beforeOutage = proxy.connections;
      await waitUntil('flowctl to try the dead service', async () => proxy.connections > beforeOutage, 30_000);
      service = await startServiceProcess(env);
      proxy.retarget(Number(new URL(service.baseUrl).port));
      await answered(tid, five);

      // 6. Two prompts queued at once after the restart, one more cut in between.
      const six = await send('six');
      const seven = await send('seven');
      await running(tid, six);
      proxy.dropAll();
      await answered(tid, six);
      await answered(tid, seven);

      // The web's view: each prompt completed with its own answer, and exactly one answer entry in the thread.
      const items: any[] = [];
      let cursor: string | null = null;
      do {
        const page = await web('GET', `/remote/terminals/${tid}/thread?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        items.push(...page.body.items);
        cursor = page.body.nextCursor;
      } while (cursor);
      for (const p of sent) {
        const view = await getPrompt(tid, p.id);
        expect(view.status, p.content).to.equal('completed');
        expect(view.answer.content).to.equal(`answer: ${p.content}`);
        expect(items.filter((e) => e.type === 'answer' && e.promptId === p.id), `answers of ${p.content}`).to.have.length(1);
        const outputs = items.filter((e) => e.type === 'step' && e.promptId === p.id && e.kind === 'output');
        expect(outputs.map((s) => s.content).join(''), `output steps of ${p.content}`).to.equal(`answer: ${p.content}\n`);
      }
      // And the agent ran each prompt once: no prompt was repeated locally either.
      expect(readFileSync(agent.log, 'utf8').trim().split('\n')).to.deep.equal(sent.map((p) => p.id));
      const events = jsonLines(cli.stdout());
      expect(events.filter((e) => e.event === 'connection_lost').length, cli.stdout()).to.be.at.least(2);
      expect(events.filter((e) => e.event === 'reconnected').length).to.be.at.least(2);
      expect(events.filter((e) => e.event === 'answered').map((e) => e.promptId)).to.deep.equal(sent.map((p) => p.id));
    });
  });
});
