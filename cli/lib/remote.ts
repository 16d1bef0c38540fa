import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ApiClient, ApiError, backoffMs, isTransient, NetworkError, sleep } from './api.js';
import { configDir, writePrivateFile } from './config.js';
import { CliError, EXIT } from './errors.js';
import type { Output } from './output.js';
import { AgentStreamParser, type AgentStep } from './agent-stream.js';
import { apiBaseUrl } from '../../client/index.js';

/**
 * `flowctl remote connect`: this terminal, registered with the service, answering the prompts the
 * web sends with a local agent command.
 *
 * What keeps a prompt from being lost or answered twice across network loss and service restarts:
 * - the long poll hands a prompt out again when its delivery was not acknowledged in time, so a
 *   prompt whose poll answer was lost on the wire comes back;
 * - the CLI remembers (in memory and in a 0600 state file) which prompts it runs and answered: a
 *   prompt handed out again is not run again, and a stored answer is posted again until the
 *   service has it (the service takes the same answer twice as one);
 * - steps carry a seq per prompt, numbered on from the state file, so a retried batch is recorded
 *   once;
 * - every call is retried with backoff (250 ms doubling to 10 s) while the service is unreachable.
 */

export interface RemoteOptions {
  name: string;
  agent: string;
  /** Seconds a poll waits on the service for a prompt. */
  wait: number;
  /** Read prompts typed on stdin, run them here and mirror them into the thread. */
  local: boolean;
  /** `stream-json`: the agent writes JSON lines (thinking, tool and output steps, its session id); `text`: plain output. */
  agentFormat?: 'text' | 'stream-json';
  /** Point the agent at the service's CLI LLM proxy (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY = this CLI token). */
  useProxy?: boolean;
}

interface AnswerRecord {
  content: string;
  status: 'completed' | 'failed' | 'cancelled';
  /** The service has it. */
  acknowledged: boolean;
  at: string;
}

interface SessionState {
  version: 1;
  url: string;
  name: string;
  terminalId: string | null;
  /** Next mirror seq (per terminal). */
  mirrorSeq: number;
  /** Next step seq of prompts being run (per prompt). */
  stepSeq: Record<string, number>;
  /** Recent answers by prompt id (the last 500). */
  answers: Record<string, AnswerRecord>;
  /** The agent's own session (stream-json), handed back on the next prompt so it keeps its context. */
  agentSessionId?: string | null;
}

const MAX_STEP_CHARS = 16_000;
const MAX_STEPS_PER_CALL = 100;
const MAX_CONTENT_CHARS = 200_000;
const KEEP_ANSWERS = 500;

type Prompt = { promptId: string; content: string };

function promptOf(body: any): Prompt | null {
  const p = body?.prompt ?? null;
  if (!p || typeof p !== 'object') return null;
  const promptId = p.promptId ?? p.id;
  if (typeof promptId !== 'string') return null;
  return { promptId, content: String(p.content ?? '') };
}

/** Prompt ids the service says were cancelled, wherever an answer lists them. */
function cancelledIn(body: any): string[] {
  const ids: string[] = [];
  for (const list of [body?.cancelledPromptIds]) {
    if (Array.isArray(list)) for (const x of list) ids.push(typeof x === 'string' ? x : (x?.promptId ?? x?.id));
  }
  const p = body?.prompt;
  if (p && (p.status === 'cancelled' || p.cancelledAt)) ids.push(p.promptId ?? p.id);
  return ids.filter((x): x is string => typeof x === 'string');
}

const clip = (text: string, max: number) => (text.length <= max ? text : `…[${text.length - max + 1} characters cut]\n${text.slice(text.length - max + 60)}`.slice(0, max));

/** Stops the agent's whole process group (the shell and what it started). */
function killTree(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
}

/** One prompt being run by the agent: its child, its output and its steps on their way. */
class Job {
  child: ChildProcess | null = null;
  stdout = '';
  cancelled = false;
  pending: Array<{ seq: number; kind: 'thinking' | 'tool' | 'output' | 'status'; content: string }> = [];
  flushing: Promise<void> | null = null;
  constructor(readonly prompt: Prompt, readonly local: boolean) {}
}

export class RemoteSession {
  private readonly statePath: string;
  private state: SessionState;
  private leaseSeconds = 30;
  private stopped = false;
  private readonly stopController = new AbortController();
  private readonly running = new Map<string, Job>();
  private queue: Promise<void> = Promise.resolve();
  private offlineSince: number | null = null;

  constructor(
    private readonly api: ApiClient,
    private readonly out: Output,
    private readonly options: RemoteOptions,
  ) {
    const key = createHash('sha256').update(`${api.baseUrl}\n${options.name}`).digest('hex').slice(0, 16);
    this.statePath = join(configDir(), `remote-${key}.json`);
    this.state = this.load();
  }

  private load(): SessionState {
    const fresh: SessionState = { version: 1, url: this.api.baseUrl, name: this.options.name, terminalId: null, mirrorSeq: 0, stepSeq: {}, answers: {} };
    if (!existsSync(this.statePath)) return fresh;
    try {
      return { ...fresh, ...(JSON.parse(readFileSync(this.statePath, 'utf8')) as Partial<SessionState>) };
    } catch {
      return fresh;
    }
  }

  private save() {
    const ids = Object.keys(this.state.answers);
    for (const id of ids.slice(0, Math.max(0, ids.length - KEEP_ANSWERS))) delete this.state.answers[id];
    writePrivateFile(this.statePath, `${JSON.stringify(this.state)}\n`);
  }

  private event(data: Record<string, unknown>, human: string) {
    this.out.line({ ...data, at: new Date().toISOString() }, () => human);
  }

  /** Runs `call` until it succeeds, waiting out network loss and restarts; other errors are thrown. */
  private async retrying<T>(what: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) throw new CliError('stopped', EXIT.INTERRUPTED, 'STOPPED');
      try {
        const value = await call();
        this.online();
        return value;
      } catch (err) {
        if (!isTransient(err)) throw err;
        this.offline(what, err as Error);
        await sleep(err instanceof ApiError && err.retryAfterSeconds ? err.retryAfterSeconds * 1000 : backoffMs(attempt), this.stopController.signal);
      }
    }
  }

  private offline(what: string, err: Error) {
    if (this.offlineSince !== null) return;
    this.offlineSince = Date.now();
    this.event({ event: 'connection_lost', during: what, reason: err.message }, `connection lost (${what}: ${err.message}); reconnecting…`);
  }

  private online() {
    if (this.offlineSince === null) return;
    const seconds = ((Date.now() - this.offlineSince) / 1000).toFixed(1);
    this.offlineSince = null;
    this.event({ event: 'reconnected', afterSeconds: Number(seconds) }, `reconnected after ${seconds} s`);
  }

  private get tid() {
    return encodeURIComponent(this.state.terminalId!);
  }

  /** Reuses the terminal this name had (a heartbeat reconnects it), or registers a new one. */
  private async connect() {
    if (this.state.terminalId) {
      try {
        await this.retrying('reconnect', () => this.api.post(`/remote/terminals/${this.tid}/heartbeat`, {}));
        this.event({ event: 'connected', terminalId: this.state.terminalId, reused: true }, `connected as terminal ${this.state.terminalId} ("${this.options.name}", reconnected)`);
        return;
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
        this.state.terminalId = null; // gone (or another user's): register anew
      }
    }
    const body = { name: this.options.name, host: hostname(), cwd: process.cwd(), capabilities: ['agent', 'steps', 'mirror', 'cancel'] };
    const created = await this.retrying('register', () => this.api.post('/remote/terminals', body));
    const terminal = created.terminal ?? {};
    this.state.terminalId = terminal.terminalId ?? terminal.id;
    if (typeof this.state.terminalId !== 'string') throw new CliError('the service answered the registration without a terminal id', EXIT.ERROR, 'BAD_ANSWER');
    if (typeof created.leaseSeconds === 'number' && created.leaseSeconds > 0) this.leaseSeconds = created.leaseSeconds;
    this.state.mirrorSeq = 0;
    this.state.stepSeq = {};
    this.save();
    this.event({ event: 'connected', terminalId: this.state.terminalId, reused: false }, `connected as terminal ${this.state.terminalId} ("${this.options.name}")`);
  }

  async run(): Promise<number> {
    await this.connect();
    const loops = [this.heartbeatLoop(), this.pollLoop()];
    if (this.options.local) loops.push(this.localLoop());
    await Promise.all(loops);
    await this.queue;
    return 0;
  }

  /** Ctrl-C / SIGTERM: stop polling, cancel a running agent, tell the service the terminal left. */
  async stop() {
    if (this.stopped) return;
    this.stopped = true;
    this.stopController.abort();
    for (const job of this.running.values()) if (job.child) killTree(job.child);
    this.save();
    if (this.state.terminalId) await this.api.delete(`/remote/terminals/${this.tid}`, { timeoutMs: 3000 }).catch(() => undefined);
    this.event({ event: 'disconnected', terminalId: this.state.terminalId }, 'disconnected');
  }

  private async heartbeatLoop() {
    while (!this.stopped) {
      await sleep(Math.max(1, this.leaseSeconds / 3) * 1000, this.stopController.signal);
      if (this.stopped) return;
      try {
        const body = await this.api.post(`/remote/terminals/${this.tid}/heartbeat`, {}, { timeoutMs: 10_000 });
        this.online();
        for (const id of cancelledIn(body)) this.cancel(id);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          // The terminal is gone on the service: register again and carry on.
          this.state.terminalId = null;
          await this.connect().catch(() => undefined);
        } else if (isTransient(err)) this.offline('heartbeat', err as Error);
        else if (err instanceof ApiError && err.status === 401) throw err;
      }
    }
  }

  private async pollLoop() {
    let attempt = 0;
    while (!this.stopped) {
      let body: any;
      try {
        body = await this.api.get(`/remote/terminals/${this.tid}/prompts/next`, {
          query: { wait: this.options.wait },
          timeoutMs: (this.options.wait + 15) * 1000,
          signal: this.stopController.signal,
        });
        attempt = 0;
        this.online();
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof ApiError && err.status === 404) {
          this.state.terminalId = null;
          await this.connect();
          continue;
        }
        if (!isTransient(err)) throw err;
        this.offline('poll', err as Error);
        await sleep(backoffMs(attempt++), this.stopController.signal);
        continue;
      }
      for (const id of cancelledIn(body)) this.cancel(id);
      const prompt = promptOf(body);
      if (!prompt || this.stopped) continue;
      const done = this.state.answers[prompt.promptId];
      if (done) {
        // Handed out again: its answer did not reach the service (or the acknowledgement was lost). Never run it twice.
        this.event({ event: 'redelivered', promptId: prompt.promptId }, `prompt ${prompt.promptId} came again: sending its answer again`);
        void this.deliverAnswer(prompt.promptId);
        continue;
      }
      if (this.running.has(prompt.promptId)) continue;
      const job = new Job(prompt, false);
      this.running.set(prompt.promptId, job);
      // Acknowledge at once (first step): the service stops handing it out while the agent works.
      this.addStep(job, 'status', `running: ${this.options.agent}`);
      void this.flush(job);
      // One agent at a time: prompts wait their turn in arrival order.
      await this.enqueue(() => this.runJob(job));
    }
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const next = this.queue.then(task, task);
    this.queue = next.catch(() => undefined);
    // The poll loop waits for its prompt to be answered before asking for the next one; cancellations arrive through heartbeats meanwhile.
    return next.catch((err) => {
      this.event({ event: 'error', message: (err as Error).message }, `error: ${(err as Error).message}`);
    });
  }

  private async localLoop() {
    const rl = createInterface({ input: process.stdin, terminal: false });
    for await (const line of rl) {
      if (this.stopped) break;
      const content = line.trim();
      if (!content) continue;
      const job = new Job({ promptId: `local-${this.state.mirrorSeq}`, content }, true);
      await this.enqueue(() => this.runJob(job));
    }
  }

  private cancel(promptId: string) {
    const job = this.running.get(promptId);
    if (!job || job.cancelled) return;
    job.cancelled = true;
    this.event({ event: 'cancelled', promptId }, `prompt ${promptId} was cancelled from the web: stopping the agent`);
    if (job.child) killTree(job.child);
  }

  private addStep(job: Job, kind: 'output' | 'status' | 'thinking' | 'tool', content: string) {
    if (job.local) return;
    const id = job.prompt.promptId;
    for (let i = 0; i < content.length || (i === 0 && content.length === 0); i += MAX_STEP_CHARS) {
      const seq = this.state.stepSeq[id] ?? 0;
      this.state.stepSeq[id] = seq + 1;
      job.pending.push({ seq, kind, content: content.slice(i, i + MAX_STEP_CHARS) });
      if (content.length === 0) break;
    }
  }

  /** Sends the job's pending steps (batches of 100), retrying until the service has them. */
  private flush(job: Job): Promise<void> {
    if (job.flushing) return job.flushing.then(() => (job.pending.length ? this.flush(job) : undefined));
    job.flushing = (async () => {
      try {
        while (job.pending.length) {
          const batch = job.pending.slice(0, MAX_STEPS_PER_CALL);
          this.save(); // the seqs handed out so far survive a restart of flowctl
          try {
            const body = await this.retrying('steps', () => this.api.post(`/remote/terminals/${this.tid}/prompts/${encodeURIComponent(job.prompt.promptId)}/steps`, { steps: batch }));
            for (const id of cancelledIn(body)) this.cancel(id);
          } catch (err) {
            if (err instanceof ApiError && (err.code === 'PROMPT_CANCELLED' || err.code === 'PROMPT_ALREADY_ANSWERED')) {
              if (err.code === 'PROMPT_CANCELLED') this.cancel(job.prompt.promptId);
              job.pending = [];
              return;
            }
            if (err instanceof ApiError && (err.status === 404 || err.status === 409 || err.status === 400)) {
              this.event({ event: 'steps_refused', promptId: job.prompt.promptId, code: err.code }, `steps of ${job.prompt.promptId} refused: ${err.message}`);
              job.pending = job.pending.slice(batch.length);
              continue;
            }
            throw err;
          }
          job.pending = job.pending.slice(batch.length);
        }
      } finally {
        job.flushing = null;
      }
    })();
    return job.flushing;
  }

  /** Runs the agent with the prompt on stdin; output goes back as steps; exit status → answer status. */
  private async runJob(job: Job) {
    if (this.stopped) return;
    const { promptId, content } = job.prompt;
    const started = Date.now();
    this.event({ event: 'prompt', promptId, local: job.local, content }, `${job.local ? 'local' : 'prompt'} ${promptId}: ${content.length > 200 ? `${content.slice(0, 199)}…` : content}`);
    if (job.local) await this.mirror([{ role: 'user', content }]);
    else void this.setThinking(true, `running ${this.options.agent}`.slice(0, 200));
    let timer: NodeJS.Timeout | null = null;
    let buffered = '';
    const parser = this.options.agentFormat === 'stream-json' ? new AgentStreamParser() : null;
    const addSteps = (steps: AgentStep[]) => {
      for (const step of steps) this.addStep(job, step.kind, step.content);
      if (steps.length > 0) void this.flush(job).catch(() => undefined);
    };
    const flushOutput = () => {
      if (!buffered) return;
      this.addStep(job, 'output', buffered);
      buffered = '';
      void this.flush(job).catch(() => undefined);
    };
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      const child = spawn(this.options.agent, {
        shell: true,
        // Its own process group: a cancel stops the shell and everything the agent started.
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, FLOWCTL_PROMPT_ID: promptId, FLOWCTL_TERMINAL_ID: this.state.terminalId ?? '', ...this.agentEnv() },
      });
      job.child = child;
      if (job.cancelled) killTree(child);
      child.stdout!.setEncoding('utf8');
      child.stderr!.setEncoding('utf8');
      child.stdout!.on('data', (chunk: string) => {
        job.stdout += chunk;
        if (job.local || !this.out.json) process.stderr.write(chunk.replace(/^/gm, '  │ '));
        if (parser) return addSteps(parser.take(chunk));
        buffered += chunk;
        if (buffered.length >= MAX_STEP_CHARS) flushOutput();
        else timer ??= setTimeout(() => ((timer = null), flushOutput()), 200);
      });
      child.stderr!.on('data', (chunk: string) => this.addStep(job, 'status', chunk));
      child.stdin!.on('error', () => undefined); // an agent that does not read its stdin
      child.stdin!.end(content.endsWith('\n') ? content : `${content}\n`);
      child.on('error', (error) => resolve({ code: null, signal: null, error }));
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
    if (timer) clearTimeout(timer);
    // flowctl itself is stopping: no answer, so the prompt is handed out again to the next session and run there.
    if (this.stopped) return;
    flushOutput();
    if (parser) {
      addSteps(parser.end());
      if (parser.sessionId) {
        this.state.agentSessionId = parser.sessionId;
        this.save();
      }
    }
    const status: AnswerRecord['status'] = job.cancelled ? 'cancelled' : exit.code === 0 && !parser?.isError ? 'completed' : 'failed';
    let answer = (parser ? parser.answer() : job.stdout).replace(/\n$/, '');
    if (status === 'failed' && !answer) answer = exit.error ? `the agent could not start: ${exit.error.message}` : `the agent exited with ${exit.code ?? exit.signal}`;
    answer = clip(answer, MAX_CONTENT_CHARS);
    const ms = Date.now() - started;
    if (job.local) {
      await this.mirror([{ role: 'assistant', content: answer }]);
      this.event({ event: 'answered', promptId, local: true, status, ms }, `→ ${status} in ${ms} ms (mirrored)`);
      return;
    }
    await this.flush(job).catch(() => undefined);
    this.state.answers[promptId] = { content: answer, status, acknowledged: false, at: new Date().toISOString() };
    delete this.state.stepSeq[promptId];
    this.save();
    this.running.delete(promptId);
    await this.deliverAnswer(promptId);
    void this.setThinking(false);
    this.event({ event: 'answered', promptId, status, ms }, `→ ${promptId} ${status} in ${ms} ms`);
  }

  /** Posts a stored answer until the service has it. */
  private async deliverAnswer(promptId: string) {
    const record = this.state.answers[promptId];
    if (!record) return;
    try {
      await this.retrying('answer', () =>
        this.api.post(`/remote/terminals/${this.tid}/prompts/${encodeURIComponent(promptId)}/answer`, { content: record.content, status: record.status }),
      );
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 409 && err.status !== 404)) throw err;
      // 409: it has another answer already (or was cancelled and took none); 404: the prompt is gone. Either way: done.
      this.event({ event: 'answer_refused', promptId, code: err.code }, `answer of ${promptId} not taken: ${err.message}`);
    }
    record.acknowledged = true;
    this.save();
  }

  private async mirror(entries: Array<{ role: 'user' | 'assistant'; content: string }>) {
    const numbered = entries.map((e) => ({ seq: this.state.mirrorSeq++, role: e.role, content: clip(e.content, MAX_CONTENT_CHARS) }));
    this.save();
    await this.retrying('mirror', () => this.api.post(`/remote/terminals/${this.tid}/mirror`, { entries: numbered })).catch((err) => {
      if (err instanceof NetworkError || this.stopped) return;
      this.event({ event: 'mirror_refused', message: (err as Error).message }, `mirror refused: ${(err as Error).message}`);
    });
  }

  /** What the agent is handed besides the prompt: its session to resume, and the CLI LLM proxy when asked. */
  private agentEnv(): Record<string, string> {
    const session = this.state.agentSessionId ?? '';
    return {
      FLOWCTL_AGENT_SESSION_ID: session,
      // Claude Code's flag; a shell agent writes `$FLOWCTL_RESUME_ARGS` and gets nothing on the first prompt.
      FLOWCTL_RESUME_ARGS: session ? `--resume ${session}` : '',
      ...(this.options.useProxy && this.api.token ? { ANTHROPIC_BASE_URL: `${apiBaseUrl(this.api.baseUrl)}/cli/llm`, ANTHROPIC_API_KEY: this.api.token } : {}),
    };
  }

  private async setThinking(thinking: boolean, label?: string) {
    await this.api.put(`/remote/terminals/${this.tid}/thinking`, { thinking, ...(label ? { label } : {}) }, { timeoutMs: 5000 }).catch(() => undefined);
  }
}
