import { z } from 'zod';

export const MAX_PAGE_SIZE = 100;

/** `limit` (1–100, default 20) and the opaque `cursor` of the previous page's `nextCursor`. */
export const pageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z.string().max(2048).optional(),
});
