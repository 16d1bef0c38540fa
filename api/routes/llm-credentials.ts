import { z } from 'zod';
import { mask } from '../../commands/users-credentials.js';
import type { SealedLlmCredential } from '../../projections/users-llm-credentials.js';

/**
 * The body that sets or removes one provider's credential, for an organization and for a user
 * alike (`apiKey: null` removes it). The provider list is the caller's own enum.
 */
export function llmCredentialBody<P extends z.ZodType<string>>(provider: P) {
  return z
    .strictObject({
      provider,
      apiKey: z.string().trim().min(1).max(4096).nullable().describe('null removes the credential'),
      baseUrl: z.url({ protocol: /^https?$/ }).max(2048).nullable().optional().describe('http(s) URL; required for openai_compatible'),
    })
    .superRefine((raw, ctx) => {
      const body = raw as { provider: string; apiKey: string | null; baseUrl?: string | null };
      // An OpenAI-compatible server (vLLM, llama.cpp, Ollama) has no default address; the deciders check it too.
      if (body.provider === 'openai_compatible' && body.apiKey !== null && !body.baseUrl) {
        ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: 'required for openai_compatible' });
      }
    });
}

/** The answer listing the credentials, masked, for an organization and for a user alike. */
export function llmCredentialsReply<P extends z.ZodType<string>>(provider: P) {
  const credential = z.object({
    provider,
    apiKeyMasked: z.string().nullable().describe('null when the key was sealed under an encryption key that has since changed'),
    baseUrl: z.string().nullable(),
    updatedAt: z.string(),
  });
  return z.object({ success: z.literal(true), credentials: z.array(credential) });
}

/** Masked only; a key sealed under an encryption key that has since changed shows as null, not as an error. */
export function maskedCredentials(sealedBox: { open(sealed: string): string }, sealed: SealedLlmCredential[]) {
  return sealed.map((c) => {
    let apiKeyMasked: string | null;
    try {
      apiKeyMasked = mask(sealedBox.open(c.sealedApiKey));
    } catch {
      apiKeyMasked = null;
    }
    return { provider: c.provider, apiKeyMasked, baseUrl: c.baseUrl, updatedAt: c.updatedAt };
  });
}
