import { SignJWT, jwtVerify, errors } from 'jose';
import { randomUUID } from 'node:crypto';

export interface TokenClaims {
  userId: string;
  orgId: string | null;
  workspaceId: string | null;
  /** Issued-at, seconds: a password change invalidates tokens issued before it. */
  issuedAt: number;
}

/** Bearer JWTs (HS256) carrying the user and the active organization and workspace. */
export class TokenService {
  constructor(
    private readonly key: Buffer,
    readonly ttlSeconds: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async issue(subject: { userId: string; orgId: string | null; workspaceId: string | null }): Promise<{ token: string; expiresIn: number }> {
    const iat = Math.floor(this.now().getTime() / 1000);
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
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], issuer: 'flowsvc', currentDate: this.now() });
      if (typeof payload.sub !== 'string' || typeof payload.iat !== 'number') return null;
      return {
        userId: payload.sub,
        orgId: typeof payload.org === 'string' ? payload.org : null,
        workspaceId: typeof payload.ws === 'string' ? payload.ws : null,
        issuedAt: payload.iat,
      };
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
