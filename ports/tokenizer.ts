/**
 * Token counting (infra/tokenizer/, gpt-tokenizer). OpenAI models are counted with their own
 * encoding (o200k_base or cl100k_base); every other family (Anthropic, Gemini, OpenAI-compatible
 * servers, offline) is counted with o200k_base too and flagged `estimate: true`, since their
 * tokenizers are not published as libraries.
 */
export interface TokenTarget {
  provider?: string | null;
  model?: string | null;
}

export interface TokenCounter {
  /** The encoding used (`o200k_base`, `cl100k_base`). */
  encoding: string;
  /** True when the encoding is not the model's own. */
  estimate: boolean;
  /** Why it is an estimate (or which model the encoding is exact for). */
  note: string;
  count(text: string): number;
}

export interface Tokenizer {
  counterFor(target: TokenTarget): Promise<TokenCounter>;
}
