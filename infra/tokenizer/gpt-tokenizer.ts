import type { TokenCounter, TokenTarget, Tokenizer } from '../../ports/tokenizer.js';

type Encoding = 'o200k_base' | 'cl100k_base';
type CountFn = (text: string) => number;

const loaded = new Map<Encoding, Promise<CountFn>>();

/** Each encoding's tables are loaded on first use (a few MB each), then kept. */
function encodingCounter(encoding: Encoding): Promise<CountFn> {
  let counter = loaded.get(encoding);
  if (!counter) {
    counter = (encoding === 'cl100k_base' ? import('gpt-tokenizer/encoding/cl100k_base') : import('gpt-tokenizer/encoding/o200k_base')).then(
      (m) => (text: string) => m.countTokens(text),
    );
    loaded.set(encoding, counter);
  }
  return counter;
}

const OPENAI_PROVIDERS = new Set(['openai']);

/** gpt-4, gpt-3.5 and the text-embedding models use cl100k_base; gpt-4o, gpt-4.1, gpt-5 and the o-series o200k_base. */
export function encodingOfOpenAiModel(model: string): Encoding {
  const m = model.toLowerCase();
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o\d|chatgpt-4o|gpt-oss|codex)/.test(m)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|text-embedding)/.test(m)) return 'cl100k_base';
  return 'o200k_base';
}

export function createGptTokenizer(): Tokenizer {
  return {
    async counterFor(target: TokenTarget): Promise<TokenCounter> {
      const provider = target.provider ?? 'openai';
      const model = target.model ?? '';
      if (OPENAI_PROVIDERS.has(provider) && model) {
        const encoding = encodingOfOpenAiModel(model);
        return { encoding, estimate: false, note: `${encoding} is ${model}'s own encoding`, count: await encodingCounter(encoding) };
      }
      if (OPENAI_PROVIDERS.has(provider)) {
        return { encoding: 'o200k_base', estimate: false, note: 'o200k_base, the encoding of current OpenAI models (gpt-4o and later)', count: await encodingCounter('o200k_base') };
      }
      return {
        encoding: 'o200k_base',
        estimate: true,
        note: `${provider} publishes no tokenizer library; counted with OpenAI's o200k_base: an estimate, not the model's own count`,
        count: await encodingCounter('o200k_base'),
      };
    },
  };
}
