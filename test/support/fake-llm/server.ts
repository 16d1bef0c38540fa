import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

/** One request as the fake received it, for assertions on headers and bodies. */
export interface CapturedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A scripted answer for the next request: a status with the provider's error body, or raw text. */
export interface ScriptedFailure {
  status: number;
  /** Sent as `Retry-After` (seconds, or an HTTP date). */
  retryAfter?: string;
  /** Raw body instead of the provider's error JSON. */
  rawBody?: string;
}

/** What a wire format contributes: its routes and its error body. */
export interface WireFormat {
  name: string;
  /** Null when the credential headers are right; else the status and message to refuse with. */
  checkAuth(req: CapturedRequest, apiKey: string): { status: number; message: string } | null;
  errorBody(status: number, message: string): unknown;
  handle(req: CapturedRequest, res: ServerResponse, fake: FakeLlmServer): Promise<boolean>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A real HTTP server on 127.0.0.1 speaking one provider's wire format, with switches a test flips:
 * slow answers, scripted failures (429 with Retry-After, 500…), malformed JSON, a required key,
 * a failing model list; every request is captured.
 */
export class FakeLlmServer {
  readonly requests: CapturedRequest[] = [];
  /** The next requests get these, one each, before normal answers resume. */
  failures: ScriptedFailure[] = [];
  /** Wait this long before answering (headers included). */
  delayMs = 0;
  /** Wait this long between stream events. */
  streamDelayMs = 0;
  /** Answer 200 with a body that is not JSON (or a stream event that is not). */
  malformed = false;
  /** The model list endpoint answers 500. */
  modelsFail = false;
  /** The answer's text; streams send it word by word. */
  text = 'Hello from the fake.';
  /**
   * When set and the request offers tools, the answer calls this tool (instead of the text) unless
   * the request's last message already carries tool results: then it answers with `text`.
   */
  toolCall: { name: string; input: Record<string, unknown> } | null = null;
  /**
   * Parallel calls (takes precedence over `toolCall`): the answer calls all of these at once.
   * `rawArguments` is sent as the arguments text as is (malformed JSON, an array…); Gemini, whose
   * arguments are objects on the wire, sends `input` and ignores it.
   */
  toolCalls: Array<{ name: string; input?: Record<string, unknown>; rawArguments?: string }> = [];
  /** How many answers call tools before the text answer (counted from the request's earlier tool-calling turns). */
  toolRounds = 1;
  /**
   * Anthropic only: when set and the request enables thinking, the answer starts with a thinking
   * block (signed by the fake, which refuses a later request whose thinking block's signature it
   * did not issue) and, with `redacted`, a redacted_thinking block.
   */
  thinking: { text: string; redacted?: string } | null = null;
  /** Provider-format usage merged over the default one. */
  usage: Record<string, number> = {};
  models: string[] = [];
  /** Requests must carry this key the provider's way; null: any. */
  apiKey: string | null = null;
  url = '';
  private server: Server | null = null;

  constructor(readonly format: WireFormat) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void this.dispatch(req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks).toString('utf8'), res).catch((err) => {
          if (!res.headersSent) res.writeHead(500).end(String(err));
          else res.destroy();
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    const server = this.server;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Back to a well-behaved server (keeps the port). */
  reset() {
    this.requests.length = 0;
    this.failures = [];
    this.delayMs = 0;
    this.streamDelayMs = 0;
    this.malformed = false;
    this.modelsFail = false;
    this.text = 'Hello from the fake.';
    this.usage = {};
    this.apiKey = null;
    this.toolCall = null;
    this.toolCalls = [];
    this.toolRounds = 1;
    this.thinking = null;
  }

  /** Requests to paths containing `fragment`. */
  requestsTo(fragment: string) {
    return this.requests.filter((r) => r.path.includes(fragment));
  }

  json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }

  /** Opens an SSE answer and returns a writer that honours `streamDelayMs`. */
  sse(res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    return async (data: unknown, event?: string) => {
      if (this.streamDelayMs) await sleep(this.streamDelayMs);
      if (res.destroyed) return;
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
    };
  }

  /**
   * The calls to make now, given how many tool-calling answers the conversation already holds;
   * empty when the request offers no tools or the rounds are done. Ids are `<prefix><round>_<n>`.
   */
  scriptedToolCalls(offersTools: boolean, earlierRounds: number, prefix: string): Array<{ id: string; name: string; input: Record<string, unknown>; argumentsText: string }> {
    const script = this.toolCalls.length > 0 ? this.toolCalls : this.toolCall ? [this.toolCall] : [];
    if (!offersTools || script.length === 0 || earlierRounds >= this.toolRounds) return [];
    return script.map((c, i) => ({
      id: `${prefix}${earlierRounds + 1}_${i}`,
      name: c.name,
      input: c.input ?? {},
      argumentsText: 'rawArguments' in c && c.rawArguments !== undefined ? c.rawArguments : JSON.stringify(c.input ?? {}),
    }));
  }

  /** The answer's text in stream pieces: words with their following space. */
  pieces(): string[] {
    return this.text.match(/\S+\s*/g) ?? [''];
  }

  private async dispatch(method: string, rawUrl: string, headers: IncomingHttpHeaders, rawBody: string, res: ServerResponse) {
    const url = new URL(rawUrl, 'http://fake');
    let body: unknown = rawBody;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      // kept raw: the test may want to see what was sent
    }
    const req: CapturedRequest = { method, path: url.pathname, query: url.searchParams, headers, body };
    this.requests.push(req);
    if (this.delayMs) await sleep(this.delayMs);
    if (res.destroyed) return;
    if (this.apiKey !== null) {
      const refused = this.format.checkAuth(req, this.apiKey);
      if (refused) return this.json(res, refused.status, this.format.errorBody(refused.status, refused.message));
    }
    const failure = this.failures.shift();
    if (failure) {
      const extra: Record<string, string> = failure.retryAfter !== undefined ? { 'retry-after': failure.retryAfter } : {};
      if (failure.rawBody !== undefined) return void res.writeHead(failure.status, { 'content-type': 'text/plain', ...extra }).end(failure.rawBody);
      return this.json(res, failure.status, this.format.errorBody(failure.status, `scripted failure ${failure.status}`), extra);
    }
    const handled = await this.format.handle(req, res, this);
    if (!handled) this.json(res, 404, this.format.errorBody(404, `no route ${method} ${url.pathname}`));
  }
}
