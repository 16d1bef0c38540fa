// Digests and comparisons of bearer secrets, shared by the commands that issue credentials and the
// adapter that checks them (infra/auth/authenticator.ts).
import { createHash, timingSafeEqual } from 'node:crypto';

/** Secrets with enough entropy (API keys, tokens) are stored as SHA-256; passwords get scrypt. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  // Compare equal-length buffers so the time does not reveal the length either.
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
