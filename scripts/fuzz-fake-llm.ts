/**
 * The LLM providers' edge for `.ci/fuzz.sh`: the test suite's fake OpenAI, Anthropic and Gemini
 * servers on loopback, so operations that call a provider (with credentials the fuzzer itself
 * stored) get answers instead of 502s from an internet the CI does not reach. Prints one line of
 * `NAME=value` environment settings, then serves until killed. Captured requests are dropped.
 */
import { startFakeAnthropic, startFakeGemini, startFakeOpenAi } from '../test/support/fake-llm/index.js';

const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
setInterval(() => {
  for (const fake of [openai, anthropic, gemini]) fake.requests.length = 0;
}, 10_000);
process.stdout.write(`OPENAI_BASE_URL=${openai.url}/v1 ANTHROPIC_BASE_URL=${anthropic.url} GEMINI_BASE_URL=${gemini.url}\n`);
const stop = async () => {
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
