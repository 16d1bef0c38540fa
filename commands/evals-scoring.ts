import { Ajv } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { compileUserRegex } from '../domain/documents/regex.js';
import { isPureScorer, JUDGE_SYSTEM, judgePrompt, readJudgeAnswer, scorePure, scorerLabels, type Score, type Scorer } from '../domain/evals/index.js';
import { DomainError } from '../domain/shared/decider.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import { LLM_PROVIDER_IDS, type LlmCaller, type LlmGateway, type LlmProviderId } from '../ports/llm.js';
import { assertWithinBudget, recordLlmSpend } from './orgs-budget.js';
import type { CommandContext } from './handle.js';

/**
 * The scorers that need more than the domain: JSON Schema (ajv, a real validator) and the LLM
 * judge (the gateway, with the caller's credentials, under the organization's budget).
 */

/**
 * ajv's `pattern` keywords run through RE2 (re2js, as the document database's patterns do), not
 * JavaScript's backtracking RegExp: a schema is user input, and `(a+)+$` must not stall the process.
 */
const re2Engine: RegExpEngine = Object.assign((pattern: string, flags: string) => compileUserRegex(pattern, flags.replace(/[^ims]/g, '')), { code: 're2' });
/**
 * A module-level validator built from constants (README "no state hidden in modules"): it keeps no
 * user schema between calls, each compiled one is removed from its cache right after use.
 */
const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true, addUsedSchema: false, code: { regExp: re2Engine } });

/** The schema compiled, or a message saying why it cannot be (an invalid schema is the request's fault, checked before anything runs). */
export function jsonSchemaProblem(schema: unknown): string | null {
  try {
    if (!ajv.validateSchema(schema as object)) return ajv.errorsText(ajv.errors);
    ajv.compile(schema as object);
    ajv.removeSchema(schema as object);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

function scoreJsonSchema(label: string, schema: object, output: unknown): Score {
  const validate = ajv.compile(schema);
  // Outputs that are JSON text (an LLM's answer) are checked as the JSON they hold.
  let value = output;
  if (typeof output === 'string') {
    try {
      value = JSON.parse(output);
    } catch {
      value = output;
    }
  }
  const ok = validate(value) as boolean;
  const reason = ok ? null : ajv.errorsText(validate.errors);
  ajv.removeSchema(schema);
  return { scorer: label, score: ok ? 1 : 0, pass: ok, reason };
}

export interface ScoringPorts {
  eventStore: EventStore;
  llm: LlmGateway;
  clock: Clock;
}

export interface CaseToScore {
  input: unknown;
  expected: unknown;
  output: unknown;
}

export interface CaseScores {
  scores: Score[];
  judgeTokens: number;
  judgeCost: number;
}

/**
 * Scores one output with every scorer. A scorer that cannot score (the judge without a credential,
 * its provider down, the budget spent) fails its score with the reason, so one case never sinks
 * the evaluation.
 */
export async function scoreCase(ports: ScoringPorts, context: CommandContext, caller: LlmCaller, scorers: Scorer[], item: CaseToScore, spendId: string): Promise<CaseScores> {
  const scores: Score[] = [];
  let judgeTokens = 0;
  let judgeCost = 0;
  const labels = scorerLabels(scorers);
  for (const [index, scorer] of scorers.entries()) {
    const label = labels[index];
    try {
      if (isPureScorer(scorer)) scores.push(scorePure(scorer, label, item.output, item.expected));
      else if (scorer.type === 'jsonSchema') scores.push(scoreJsonSchema(label, scorer.schema, item.output));
      else {
        const judged = await judge(ports, context, caller, scorer, label, item, `${spendId}:${index}`);
        scores.push(judged.score);
        judgeTokens += judged.tokens;
        judgeCost += judged.cost;
      }
    } catch (err) {
      // A scorer that cannot score this output (the judge's provider down, a pattern too complex for it) fails this score only.
      const code = err instanceof DomainError ? err.code : ((err as { code?: string }).code ?? 'SCORER_FAILED');
      scores.push({ scorer: label, score: 0, pass: false, reason: `${code}: ${(err as Error).message}`.slice(0, 1_000) });
    }
  }
  return { scores, judgeTokens, judgeCost };
}

/** The judge's provider and model: the scorer's, else the gateway's default for the caller. */
export async function judgeModel(llm: LlmGateway, caller: LlmCaller, scorer: Extract<Scorer, { type: 'judge' }>): Promise<{ provider: LlmProviderId; model: string }> {
  if (!scorer.provider) {
    const chosen = await llm.defaultModel(caller);
    return { provider: chosen.provider, model: scorer.model ?? chosen.model };
  }
  const provider = scorer.provider as LlmProviderId;
  const model = scorer.model ?? llm.defaultModelOf(provider);
  if (!model) throw new DomainError('JUDGE_MODEL_REQUIRED', `provider ${provider} needs a model name`, 'invalid');
  return { provider, model };
}

export const isProviderId = (p: string): p is LlmProviderId => (LLM_PROVIDER_IDS as readonly string[]).includes(p);

async function judge(ports: ScoringPorts, context: CommandContext, caller: LlmCaller, scorer: Extract<Scorer, { type: 'judge' }>, label: string, item: CaseToScore, spendId: string) {
  const { provider, model } = await judgeModel(ports.llm, caller, scorer);
  await assertWithinBudget({ eventStore: ports.eventStore, clock: ports.clock }, caller, provider);
  const llm = await ports.llm.providerFor(caller, provider);
  const result = await llm.complete({
    model,
    temperature: 0,
    maxTokens: 400,
    messages: [
      { role: 'system', content: JUDGE_SYSTEM },
      { role: 'user', content: judgePrompt(scorer.rubric, item.input, item.expected, item.output) },
    ],
  });
  if (caller.orgId && result.cost > 0) await recordLlmSpend(ports.eventStore, context, { orgId: caller.orgId, amountUsd: result.cost, spendId });
  return { score: readJudgeAnswer(label, result.text, scorer.passThreshold), tokens: result.usage.totalTokens, cost: result.cost };
}
