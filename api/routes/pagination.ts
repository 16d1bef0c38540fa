import { z } from 'zod';
import type { RouteReply } from '../route.js';

export const MAX_PAGE_SIZE = 100;

/** `limit` (1–100, default 20) and the opaque `cursor` of the previous page's `nextCursor`. */
export const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z.string().max(2048).optional(),
});

/** The 200 answer of a list route: the page's items (through `view`, when given) and the next page's cursor. */
export function pageReply<T, V = T>(page: { items: T[]; nextCursor: string | null }, view?: (item: T) => V): RouteReply {
  return { status: 200, body: { success: true, items: view ? page.items.map(view) : page.items, nextCursor: page.nextCursor } };
}
