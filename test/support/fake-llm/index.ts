/** Local servers speaking each provider's wire format (no test calls the internet). */
export { FakeLlmServer, type CapturedRequest, type ScriptedFailure, type WireFormat } from './server.js';
export { OPENAI_DEFAULT_USAGE, openAiSnapshot, startFakeOpenAi } from './openai.js';
export { ANTHROPIC_DEFAULT_USAGE, startFakeAnthropic } from './anthropic.js';
export { GEMINI_DEFAULT_USAGE, startFakeGemini } from './gemini.js';
