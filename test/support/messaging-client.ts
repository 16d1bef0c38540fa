import { expect } from 'chai';
import { call } from './http.js';
import { waitUntil } from './test-service.js';

/** Small helpers over the messaging routes for the tests. */
export function messagingClient(baseUrl: string, auth: Record<string, string>) {
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = auth) => call(baseUrl, method, path, body, headers);
  return {
    api,
    async createSession(name: string, extra: Record<string, unknown> = {}) {
      const res = await api('POST', '/messaging/sessions', { name, ...extra });
      expect(res.status, res.text).to.equal(201);
      return res.body.session as { id: string; address: string; status: string; me: { id: string } | null; qr: string | null };
    },
    async send(sessionId: string, chatId: string, text: string, replyTo?: string) {
      const res = await api('POST', `/messaging/sessions/${sessionId}/messages`, { chatId, text, ...(replyTo ? { replyTo } : {}) });
      expect(res.status, res.text).to.equal(201);
      return res.body.message as { id: string; ack: string; chatId: string };
    },
    async messages(sessionId: string, chatId: string, query = '') {
      const res = await api('GET', `/messaging/sessions/${sessionId}/chats/${encodeURIComponent(chatId)}/messages${query}`);
      expect(res.status, res.text).to.equal(200);
      return res.body as { items: Array<{ id: string; text: string; ack: string | null; fromMe: boolean; read: boolean; from: string; replyTo: string | null; groupId: string | null }>; nextCursor: string | null };
    },
    async chats(sessionId: string, query = '') {
      const res = await api('GET', `/messaging/sessions/${sessionId}/chats${query}`);
      expect(res.status, res.text).to.equal(200);
      return res.body as { items: Array<{ id: string; unreadCount: number; isGroup: boolean; name: string | null; lastMessage: { id: string; text: string } | null }>; nextCursor: string | null };
    },
    /** Waits until a message of `sessionId`'s chat reaches the ack (read model; consumers are asynchronous). */
    async waitForAck(sessionId: string, chatId: string, messageId: string, ack: string) {
      return waitUntil(`ack ${ack} on ${messageId}`, async () => {
        const page = await this.messages(sessionId, chatId, '?limit=100');
        return page.items.find((m) => m.id === messageId && m.ack === ack);
      });
    },
    async waitForMessage(sessionId: string, chatId: string, messageId: string) {
      return waitUntil(`message ${messageId} in ${sessionId}`, async () => {
        const res = await api('GET', `/messaging/sessions/${sessionId}/chats/${encodeURIComponent(chatId)}/messages?limit=100`);
        return res.status === 200 && (res.body.items as Array<{ id: string }>).find((m) => m.id === messageId);
      });
    },
  };
}
