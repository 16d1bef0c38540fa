/**
 * Encrypts secrets that must be read back (provider credentials, MCP env, PKCE verifiers): the
 * sealed form is what events hold (adapter: `infra/auth/sealed-box.ts`, AES-256-GCM, `v1.…`).
 */
export interface SecretSealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}
