import { JsonValue } from '../runs/status';

/** One exchange of a chat: what the person asked, the tool calls the agent made, and its answer. */
export interface ToolCallView {
  id: string;
  name: string;
  input: unknown;
  result: { content: string; isError: boolean } | null;
}

export interface TurnView {
  messageId: string | null;
  content: string;
  text: string;
  toolCalls: ToolCallView[];
  finishReason: string | null;
  error: { code: string; message: string } | null;
  streaming: boolean;
}

export function Turn({ turn }: { turn: TurnView }) {
  return (
    <article className="agent-turn" aria-label="Exchange" data-message-id={turn.messageId ?? undefined}>
      <div className="agent-you">
        <span className="agent-who">You</span>
        <p>{turn.content}</p>
      </div>
      {turn.toolCalls.length > 0 ? (
        <ul className="agent-tools" aria-label="Tool calls">
          {turn.toolCalls.map((c) => (
            <li key={c.id} className="agent-tool" data-tool={c.name}>
              <details>
                <summary>
                  Tool call <code>{c.name}</code>{' '}
                  {c.result ? (c.result.isError ? <span className="status status-failed">error</span> : <span className="status status-completed">done</span>) : <span className="status status-running">running</span>}
                </summary>
                <JsonValue value={c.input} label={`Input of ${c.name}`} />
                {c.result ? <pre className="json agent-tool-result">{c.result.content}</pre> : null}
              </details>
            </li>
          ))}
        </ul>
      ) : null}
      <div className="agent-answer" aria-label="Answer" aria-busy={turn.streaming} data-streaming={turn.streaming ? 'true' : 'false'}>
        <span className="agent-who">Agent</span>
        <p>{turn.text || (turn.streaming ? '…' : '')}</p>
        {turn.error ? (
          <p className="error" data-code={turn.error.code}>
            {turn.error.message} <code className="error-code">{turn.error.code}</code>
          </p>
        ) : null}
        {turn.finishReason && turn.finishReason !== 'stop' ? <p className="muted">Stopped: {turn.finishReason.replace(/_/g, ' ')}</p> : null}
      </div>
    </article>
  );
}
