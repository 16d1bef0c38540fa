import type { Config } from '../config/index.js';
import { EmbeddingsError, type EmbeddingsClient } from '../../ports/embeddings.js';

/**
 * Client of an OpenAI-compatible embeddings endpoint (`POST <MEMORY_EMBEDDINGS_URL>/embeddings`
 * with `{model, input: [texts]}` → `{data: [{index, embedding}]}`): OpenAI, vLLM, llama.cpp's
 * server, Ollama's /v1. The URL is the operator's configuration, not user input, so it is called
 * directly (like the LLM providers' base URLs), not through the outbound guard.
 */
type EmbeddingsConfig = Pick<Config, 'MEMORY_EMBEDDINGS_URL' | 'MEMORY_EMBEDDINGS_API_KEY' | 'MEMORY_EMBEDDINGS_MODEL' | 'MEMORY_EMBEDDINGS_TIMEOUT_MS'>;

const clients = new WeakMap<object, EmbeddingsClient | null>();

/** The configured client, or null when no provider is configured (lexical ranking only). */
export function embeddingsClientFor(config: EmbeddingsConfig): EmbeddingsClient | null {
  if (!config.MEMORY_EMBEDDINGS_URL) return null;
  let client = clients.get(config);
  if (client === undefined) clients.set(config, (client = openAiEmbeddings(config)));
  return client;
}

function openAiEmbeddings(config: EmbeddingsConfig): EmbeddingsClient {
  const url = `${config.MEMORY_EMBEDDINGS_URL!.replace(/\/+$/, '')}/embeddings`;
  const model = config.MEMORY_EMBEDDINGS_MODEL;
  return {
    model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const timeout = AbortSignal.timeout(config.MEMORY_EMBEDDINGS_TIMEOUT_MS);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(config.MEMORY_EMBEDDINGS_API_KEY ? { authorization: `Bearer ${config.MEMORY_EMBEDDINGS_API_KEY}` } : {}) },
          body: JSON.stringify({ model, input: texts }),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (err) {
        throw new EmbeddingsError(`embeddings request failed: ${(err as Error).message}`);
      }
      const body = (await response.json().catch(() => null)) as { data?: Array<{ index?: number; embedding?: unknown }> } | null;
      if (!response.ok) throw new EmbeddingsError(`embeddings endpoint answered HTTP ${response.status}`);
      const data = body?.data;
      if (!Array.isArray(data) || data.length !== texts.length) throw new EmbeddingsError('embeddings answer has no data for every input');
      const vectors: number[][] = new Array(texts.length);
      data.forEach((item, i) => {
        const vector = item.embedding;
        if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) throw new EmbeddingsError('embeddings answer holds a malformed vector');
        vectors[typeof item.index === 'number' ? item.index : i] = vector as number[];
      });
      return vectors;
    },
  };
}
