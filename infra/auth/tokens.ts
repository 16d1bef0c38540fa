import { SignJWT, jwtVerify, errors } from 'jose';
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import type { TokenClaims, TokenIssuer, TokenSubject } from '../../ports/auth.js';
import { systemClock, type Clock } from '../../ports/clock.js';

export type { TokenClaims } from '../../ports/auth.js';

/** Bearer JWTs (HS256) carrying the user and the active organization and workspace. */
const VERIFIED_CACHE_LIMIT = 10_000;

export class TokenService implements TokenIssuer {
  /**
   * Tokens already verified, with their expiry: a signature check costs more than the rest of a cheap
   * request. Read with `peek`, so the token verified longest ago goes first when it is full.
   */
  private readonly verified = new LRUCache<string, { claims: TokenClaims; expiresAt: number }>({ max: VERIFIED_CACHE_LIMIT });

  constructor(
    private readonly key: Buffer,
    readonly ttlSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {}

  async issue(subject: TokenSubject): Promise<{ token: string; expiresIn: number }> {
    const iat = Math.floor(this.clock.now().getTime() / 1000);
    const token = await new SignJWT({ org: subject.orgId, ws: subject.workspaceId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(subject.userId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .setJti(randomUUID())
      .setIssuer('flowsvc')
      .sign(this.key);
    return { token, expiresIn: this.ttlSeconds };
  }

  /** Null for anything that is not a valid, unexpired token of ours. */
  async verify(token: string): Promise<TokenClaims | null> {
    const cached = this.verified.peek(token);
    if (cached) {
      if (cached.expiresAt > this.clock.now().getTime() / 1000) return cached.claims;
      this.verified.delete(token);
      return null;
    }
    const claims = await this.verifySignature(token);
    if (claims) this.verified.set(token, claims);
    return claims?.claims ?? null;
  }

  private async verifySignature(token: string): Promise<{ claims: TokenClaims; expiresAt: number } | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: 'flowsvc', currentDate: this.clock.now() });
      if (typeof payload.sub !== 'string' || typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return null;
      const claims = {
        userId: payload.sub,
        orgId: typeof payload.org === 'string' ? payload.org : null,
        workspaceId: typeof payload.ws === 'string' ? payload.ws : null,
        issuedAt: payload.iat,
      };
      return { claims, expiresAt: payload.exp };
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
