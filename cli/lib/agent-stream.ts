/**
 * `--agent-format stream-json`: the agent writes one JSON object per line, as Claude Code does with
 * `--output-format stream-json --verbose`. What flowctl takes from it:
 * - `{"type":"system","subtype":"init","session_id":…}` and `{"type":"result","session_id":…}`: the
 *   agent's own session, handed back on the next prompt (FLOWCTL_AGENT_SESSION_ID and
 *   FLOWCTL_RESUME_ARGS=`--resume <id>`), so the agent keeps its context between prompts;
 * - `{"type":"assistant","message":{"content":[…]}}`: `thinking` blocks → thinking steps, `tool_use`
 *   → tool steps (name and input), `text` → output steps;
 * - `{"type":"user","message":{"content":[{"type":"tool_result",…}]}}` → tool steps (the result);
 * - `{"type":"result","result":…,"is_error":…}`: the answer.
 * A line that is not such JSON is output as it is (an agent that prints plain text still works).
 */
export type AgentStep = { kind: 'thinking' | 'tool' | 'output'; content: string };

export class AgentStreamParser {
  private partial = '';
  sessionId: string | null = null;
  /** The `result` line's text; null until one came. */
  result: string | null = null;
  isError = false;
  /** The text blocks seen, for an agent that ends without a result line. */
  private texts: string[] = [];

  /** The steps of the complete lines in `chunk` (a partial last line waits for the next chunk). */
  take(chunk: string): AgentStep[] {
    this.partial += chunk;
    const lines = this.partial.split('\n');
    this.partial = lines.pop() ?? '';
    return lines.flatMap((line) => this.line(line));
  }

  /** The steps of what is left once the agent exited. */
  end(): AgentStep[] {
    const rest = this.partial;
    this.partial = '';
    return rest ? this.line(rest) : [];
  }

  /** The answer: the result line's text, else the text the agent wrote. */
  answer(): string {
    return this.result ?? this.texts.join('');
  }

  private line(raw: string): AgentStep[] {
    const line = raw.trim();
    if (!line) return [];
    let event: any;
    try {
      event = JSON.parse(line);
    } catch {
      this.texts.push(`${raw}\n`);
      return [{ kind: 'output', content: `${raw}\n` }];
    }
    if (typeof event?.session_id === 'string' && event.session_id) this.sessionId = event.session_id;
    switch (event?.type) {
      case 'system':
        return [];
      case 'result':
        if (typeof event.result === 'string') this.result = event.result;
        this.isError = event.is_error === true || event.subtype === 'error';
        return [];
      case 'assistant':
        return blocksOf(event).flatMap((b: any) => this.assistantBlock(b));
      case 'user':
        return blocksOf(event).filter((b: any) => b?.type === 'tool_result').map((b: any) => ({ kind: 'tool' as const, content: `result${b.is_error ? ' (error)' : ''}: ${textOf(b.content)}` }));
      default:
        return [];
    }
  }

  private assistantBlock(block: any): AgentStep[] {
    if (block?.type === 'thinking' && typeof block.thinking === 'string') return [{ kind: 'thinking', content: block.thinking }];
    if (block?.type === 'redacted_thinking') return [{ kind: 'thinking', content: '[redacted thinking]' }];
    if (block?.type === 'tool_use') return [{ kind: 'tool', content: `${String(block.name)} ${JSON.stringify(block.input ?? {})}` }];
    if (block?.type === 'text' && typeof block.text === 'string') {
      this.texts.push(block.text);
      return [{ kind: 'output', content: block.text }];
    }
    return [];
  }
}

const blocksOf = (event: any): any[] => (Array.isArray(event?.message?.content) ? event.message.content : []);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c?.text === 'string' ? c.text : JSON.stringify(c))).join('');
  return JSON.stringify(content ?? null);
}
