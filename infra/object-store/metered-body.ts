import { createHash } from 'node:crypto';
import { tooLarge } from './keys.js';

/**
 * An object's body as its adapter reads it: chunks counted and hashed as they pass, refused with
 * OBJECT_TOO_LARGE as soon as they exceed `maxBytes` (before the chunk is stored anywhere), so every
 * adapter reports the same size and SHA-256 and enforces the same limit.
 */
export class MeteredBody implements AsyncIterable<Uint8Array> {
  size = 0;
  private readonly hash = createHash('sha256');

  constructor(
    private readonly body: AsyncIterable<Uint8Array> | Uint8Array,
    private readonly maxBytes: number | undefined,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const chunks = this.body instanceof Uint8Array ? [this.body] : this.body;
    for await (const chunk of chunks) {
      this.size += chunk.length;
      if (this.maxBytes !== undefined && this.size > this.maxBytes) throw tooLarge(this.maxBytes);
      this.hash.update(chunk);
      yield chunk;
    }
  }

  /** The SHA-256 of what passed, in hex; call once, after the body was read. */
  sha256(): string {
    return this.hash.digest('hex');
  }
}
