import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { follow } from '../live';
import { api, call } from '../session';
import { ErrorNote, Field, Page, formatTime, useAction, useLoad } from '../ui';
import { streamTurn, type TurnEvent } from './stream';
import { Turn, type TurnView } from './turn';
import './agents.css';

/**
 * /agents/:agentId: chat with an agent. Sessions on the side (the one open is in the address,
 * ?session=…), the open session's exchanges from its log, and a message box whose answer streams in
 * as the agent writes it, tool calls included. Once the turn completes the session is read again
 * and the streamed exchange gives way to the recorded one.
 */
export function AgentChatPage({ params }: { params: Record<string, string | undefined> }) {
  const agentId = params.agentId ?? '';
  const sessionId = new URLSearchParams(useSearch()).get('session') ?? '';
  const [, navigate] = useLocation();
  const open = useCallback((id: string) => navigate(`/agents/${agentId}?session=${encodeURIComponent(id)}`), [agentId, navigate]);
  const agent = useLoad(() => call(api().GET('/agents/{agentId}', { params: { path: { agentId } } })), [agentId]);
  const sessions = useLoad(() => call(api().GET('/agents/{agentId}/sessions', { params: { path: { agentId }, query: { limit: 50 } } })), [agentId]);
  const create = useAction(async () => {
    const made = await call(api().POST('/agents/{agentId}/sessions', { params: { path: { agentId } }, body: {} }));
    sessions.reload();
    open(made.session.id);
  });
  return (
    <Page title={agent.data ? `Chat with ${agent.data.agent.name}` : 'Agent'} actions={<Link href="/agents">All agents</Link>}>
      <ErrorNote error={agent.error} />
      {agent.data ? (
        <p className="muted">
          {agent.data.agent.provider} / {agent.data.agent.model}
          {agent.data.agent.tools.length ? ` · ${agent.data.agent.tools.length} tool${agent.data.agent.tools.length === 1 ? '' : 's'}` : ''}
        </p>
      ) : null}
      <div className="agent-layout">
        <nav className="card agent-sessions" aria-labelledby="agent-sessions">
          <h2 id="agent-sessions">Sessions</h2>
          <button type="button" onClick={() => void create.run()} disabled={create.pending}>
            New session
          </button>
          <ErrorNote error={create.error ?? sessions.error} />
          <ul>
            {(sessions.data?.items ?? []).map((s) => (
              <li key={s.id}>
                <Link href={`/agents/${agentId}?session=${s.id}`} aria-current={s.id === sessionId ? 'page' : undefined}>
                  {s.title ?? `Session of ${formatTime(s.createdAt)}`}
                </Link>
                <span className="muted"> · {s.messageCount} message{s.messageCount === 1 ? '' : 's'}</span>
              </li>
            ))}
          </ul>
        </nav>
        {sessionId ? (
          <Chat key={sessionId} agentId={agentId} sessionId={sessionId} onTurnDone={sessions.reload} />
        ) : (
          <section className="card agent-chat">
            <p className="muted">Open a session or start a new one.</p>
          </section>
        )}
      </div>
    </Page>
  );
}

function Chat({ agentId, sessionId, onTurnDone }: { agentId: string; sessionId: string; onTurnDone: () => void }) {
  const session = useLoad(() => call(api().GET('/agents/{agentId}/sessions/{sessionId}', { params: { path: { agentId, sessionId } } })), [agentId, sessionId]);
  const [pending, setPending] = useState<TurnView | null>(null);
  const [content, setContent] = useState('');
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);
  const sending = useRef(false);
  useEffect(() => () => abort.current?.abort(), []);

  // A turn already running when the session is opened (sent from another tab, or before a reload)
  // is followed from the log (GET …/messages/{messageId}/events), replayed from its start.
  const messages = session.data?.session.messages ?? [];
  const running = messages.find((m) => m.status === 'running');
  useEffect(() => {
    if (!running || sending.current) return;
    setPending({ messageId: running.id, content: running.content, text: '', toolCalls: [], finishReason: null, error: null, streaming: true });
    return follow(
      `/agents/${encodeURIComponent(agentId)}/sessions/${encodeURIComponent(sessionId)}/messages/${encodeURIComponent(running.id)}/events`,
      (frame) => setPending((p) => (p && p.messageId === running.id ? applyTurnEvent(p, { event: frame.event, data: (frame.data ?? {}) as Record<string, unknown> }) : p)),
      () => {
        setPending((p) => (p ? { ...p, streaming: false } : p));
        session.reload();
        onTurnDone();
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [running?.id]);

  const send = async (e: FormEvent) => {
    e.preventDefault();
    const text = content.trim();
    if (!text || pending?.streaming) return;
    setError(null);
    setContent('');
    setPending({ messageId: null, content: text, text: '', toolCalls: [], finishReason: null, error: null, streaming: true });
    abort.current = new AbortController();
    sending.current = true;
    try {
      await streamTurn(agentId, sessionId, text, (ev) => setPending((p) => (p ? applyTurnEvent(p, ev) : p)), abort.current.signal);
      setPending((p) => (p ? { ...p, streaming: false } : p));
    } catch (err) {
      if (abort.current.signal.aborted) return;
      // Refused (busy, budget, …) or cut off: the message box gets the text back, and the session
      // read back shows whatever the log holds.
      setError(err);
      setContent(text);
      setPending(null);
    }
    sending.current = false;
    session.reload();
    onTurnDone();
  };

  const stop = useAction(async (messageId: string) => {
    await call(api().POST('/agents/{agentId}/sessions/{sessionId}/messages/{messageId}/cancel', { params: { path: { agentId, sessionId, messageId } } }));
  });

  // The streamed exchange stays until the session read back holds it finished.
  const showPending = pending && !(pending.messageId && messages.some((m) => m.id === pending.messageId && m.status === 'completed') && !pending.streaming);
  return (
    <section className="card agent-chat" aria-labelledby="agent-chat">
      <h2 id="agent-chat">Conversation</h2>
      <ErrorNote error={session.error} />
      <div className="agent-log" aria-live="polite">
        {messages.filter((m) => !(showPending && m.id === pending.messageId)).map((m) => (
          <Turn
            key={m.id}
            turn={{
              messageId: m.id,
              content: m.content,
              text: m.answer.text,
              toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, input: c.input, result: c.result })),
              finishReason: m.answer.finishReason,
              error: m.answer.error,
              streaming: m.status === 'running',
            }}
          />
        ))}
        {showPending ? <Turn turn={pending} /> : null}
        {session.data && messages.length === 0 && !pending ? <p className="muted">No message yet.</p> : null}
      </div>
      <form onSubmit={send} className="agent-send">
        <Field label="Message">
          <textarea
            value={content}
            onChange={(e) => setContent(e.target.value)}
            rows={3}
            onKeyDown={(e) => {
              // Ctrl/⌘+Enter sends, as in most chat boxes; Enter alone keeps a new line.
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) e.currentTarget.form?.requestSubmit();
            }}
          />
        </Field>
        <ErrorNote error={error ?? stop.error} />
        <div className="agent-buttons">
          <button type="submit" disabled={!content.trim() || !!pending?.streaming}>
            {pending?.streaming ? 'Answering…' : 'Send'}
          </button>
          {pending?.streaming && pending.messageId ? (
            <button type="button" className="danger" onClick={() => void stop.run(pending.messageId!)} disabled={stop.pending}>
              Stop
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}

/** The streamed exchange moved on by one event of the turn. */
export function applyTurnEvent(turn: TurnView, { event, data }: TurnEvent): TurnView {
  switch (event) {
    case 'message.started':
      return { ...turn, messageId: String(data.messageId) };
    case 'message.delta':
      return { ...turn, text: turn.text + String(data.text ?? '') };
    case 'tool.called':
      return { ...turn, toolCalls: [...turn.toolCalls, { id: String(data.toolCallId), name: String(data.name), input: data.input, result: null }] };
    case 'tool.result':
      return {
        ...turn,
        toolCalls: turn.toolCalls.map((c) => (c.id === data.toolCallId ? { ...c, result: { content: String(data.content ?? ''), isError: Boolean(data.isError) } } : c)),
      };
    case 'message.completed': {
      const err = data.error as { code: string; message: string } | null;
      return { ...turn, text: typeof data.text === 'string' ? data.text : turn.text, finishReason: (data.finishReason as string) ?? null, error: err ?? null, streaming: false };
    }
    case 'error':
      return { ...turn, error: { code: String(data.code ?? 'ERROR'), message: String(data.message ?? '') } };
    default:
      return turn;
  }
}
