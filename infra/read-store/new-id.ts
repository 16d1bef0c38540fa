import { randomBytes } from 'node:crypto';

/** `_id` for an upserted document whose filter did not pin one: ObjectId-sized hex, but a string
 * (the port's documents have string ids; MongoDB would otherwise invent an ObjectId). */
export function newId(): string {
  return randomBytes(12).toString('hex');
}
