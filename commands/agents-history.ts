import type { AgentMessageState, AgentSessionState } from '../domain/agents/index.js';
import type { LlmMessage } from '../ports/llm.js';

/** The history a turn sends the model: earlier turns of the session, whole, within a token budget. */

export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The user's message as the model reads it: the text, then each attachment. */
export function userText(m: Pick<AgentMessageState, 'content' | 'attachments'>): string {
  const attachments = m.attachments.map((a) => `\n\n[attachment ${a.name} (${a.mediaType})]\n${a.content}`).join('');
  return m.content + attachments;
}

/** One earlier turn as messages the model sees: the user's text, each step with its calls and results, and the answer. */
export function turnMessages(m: AgentMessageState): LlmMessage[] {
  const out: LlmMessage[] = [{ role: 'user', content: userText(m) }];
  let stepsText = '';
  for (const step of m.steps) {
    if (step.text) stepsText = stepsText ? `${stepsText}\n\n${step.text}` : step.text;
    const results = step.toolCalls.map((c) => m.toolCalls.find((t) => t.toolCallId === c.id && t.iteration === step.iteration)?.result);
    if (step.toolCalls.length > 0 && results.every((r) => r)) {
      out.push({ role: 'assistant', content: step.text, toolCalls: step.toolCalls });
      out.push({ role: 'user', content: '', toolResults: step.toolCalls.map((c, i) => ({ toolCallId: c.id, name: c.name, content: results[i]!.content, ...(results[i]!.isError && { isError: true }) })) });
    } else {
      if (step.text) out.push({ role: 'assistant', content: step.text });
      if (step.toolCalls.length > 0) break;
    }
  }
  const finalText = m.completed?.text ?? m.streamedText;
  const tail = finalText.startsWith(stepsText) ? finalText.slice(stepsText.length).trim() : '';
  const reason = m.completed?.finishReason ?? 'interrupted';
  if (tail) out.push({ role: 'assistant', content: reason === 'stop' ? tail : `${tail}\n[answer ended early: ${reason}]` });
  if (out[out.length - 1].role !== 'assistant') out.push({ role: 'assistant', content: `[no answer: ${reason}]` });
  return out;
}

function tokensOf(messages: LlmMessage[]): number {
  return messages.reduce((n, m) => n + estimateTokens(m.content) + (m.toolCalls ? estimateTokens(JSON.stringify(m.toolCalls)) : 0) + (m.toolResults ? estimateTokens(JSON.stringify(m.toolResults)) : 0), 0);
}

/** The earlier turns that fit the budget, newest kept first; whole turns are dropped, oldest first. */
export function historyWithin(session: AgentSessionState, budgetTokens: number) {
  const turns = session.messages.filter((m) => m.completed).map((m) => ({ id: m.messageId, messages: turnMessages(m) }));
  const included: typeof turns = [];
  let used = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const cost = tokensOf(turns[i].messages);
    if (used + cost > budgetTokens) break;
    included.unshift(turns[i]);
    used += cost;
  }
  const dropped = turns.slice(0, turns.length - included.length).map((t) => t.id);
  return { messages: included.flatMap((t) => t.messages), includedMessageIds: included.map((t) => t.id), droppedMessageIds: dropped, estimatedTokens: used };
}
