/**
 * Text embeddings for the memory context's semantic ranking. The adapter (infra/memory/embeddings.ts)
 * speaks the OpenAI-compatible `/embeddings` wire format; none is configured without a provider.
 */
export interface EmbeddingsClient {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** The provider failed or answered something unusable: callers carry on without vectors. */
export class EmbeddingsError extends Error {
  readonly code = 'EMBEDDINGS_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}
