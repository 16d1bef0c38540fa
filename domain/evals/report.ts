import type { CaseResult, Variant } from './events.js';
import { resultKey, type EvaluationState } from './state.js';

/** An evaluation's report, computed from its recorded results (nothing stored twice). */

export interface VariantSummary {
  variant: Variant;
  flowVersion: number;
  cases: number;
  passed: number;
  failed: number;
  /** Cases whose run did not finish (refused by the budget, a failed run…); they count as failed too. */
  errored: number;
  passRate: number;
  meanScore: number;
  latencyMs: { mean: number | null; p50: number | null; p95: number | null };
  tokens: number;
  cost: number;
  judgeTokens: number;
  judgeCost: number;
}

export type CaseChange = 'improved' | 'regressed' | 'same' | 'score_changed';

export interface CaseRow {
  caseId: string;
  a: CaseResult | null;
  b: CaseResult | null;
  /** Only with two versions: how the evaluated version (a) does against the baseline (b, `against`). */
  change: CaseChange | null;
  scoreDelta: number | null;
}

export interface Differences {
  passRate: number;
  meanScore: number;
  latencyMeanMs: number | null;
  tokens: number;
  cost: number;
  improved: string[];
  regressed: string[];
  scoreChanged: string[];
}

const round = (n: number, places = 6) => Math.round(n * 10 ** places) / 10 ** places;

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function summarize(results: CaseResult[], variant: Variant, flowVersion: number): VariantSummary {
  const passed = results.filter((r) => r.pass).length;
  const latencies = results.map((r) => r.latencyMs).filter((l): l is number => l !== null).sort((x, y) => x - y);
  const sum = (f: (r: CaseResult) => number) => results.reduce((s, r) => s + f(r), 0);
  return {
    variant, flowVersion,
    cases: results.length, passed, failed: results.length - passed, errored: results.filter((r) => r.error !== null).length,
    passRate: results.length ? round(passed / results.length) : 0,
    meanScore: results.length ? round(sum((r) => r.score) / results.length) : 0,
    latencyMs: { mean: latencies.length ? round(latencies.reduce((s, l) => s + l, 0) / latencies.length, 1) : null, p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
    tokens: sum((r) => r.tokens), cost: round(sum((r) => r.cost), 9), judgeTokens: sum((r) => r.judgeTokens), judgeCost: round(sum((r) => r.judgeCost), 9),
  };
}

/** The evaluated version's result against the baseline's: improved when it passes where the baseline failed. */
function changeOf(evaluated: CaseResult, baseline: CaseResult): CaseChange {
  if (evaluated.pass && !baseline.pass) return 'improved';
  if (!evaluated.pass && baseline.pass) return 'regressed';
  return Math.abs(evaluated.score - baseline.score) > 1e-9 ? 'score_changed' : 'same';
}

export function evaluationReport(state: EvaluationState) {
  const of = (variant: Variant) => state.caseIds.map((id) => state.results[resultKey(variant, id)]).filter((r): r is CaseResult => Boolean(r));
  const summaries = state.variants.map((v) => summarize(of(v.variant), v.variant, v.flowVersion));
  const paired = state.variants.length === 2;
  const cases: CaseRow[] = state.caseIds.map((caseId) => {
    const a = state.results[resultKey('a', caseId)] ?? null;
    const b = state.results[resultKey('b', caseId)] ?? null;
    const both = paired && a && b ? { a, b } : null;
    return { caseId, a, b, change: both ? changeOf(both.a, both.b) : null, scoreDelta: both ? round(both.a.score - both.b.score) : null };
  });
  let differences: Differences | null = null;
  if (paired) {
    // The evaluated version (a) minus the baseline (b): positive pass rate, better.
    const [sa, sb] = summaries;
    const named = (c: CaseChange) => cases.filter((r) => r.change === c).map((r) => r.caseId);
    differences = {
      passRate: round(sa.passRate - sb.passRate), meanScore: round(sa.meanScore - sb.meanScore),
      latencyMeanMs: sa.latencyMs.mean !== null && sb.latencyMs.mean !== null ? round(sa.latencyMs.mean - sb.latencyMs.mean, 1) : null,
      tokens: sa.tokens - sb.tokens, cost: round(sa.cost - sb.cost, 9),
      improved: named('improved'), regressed: named('regressed'), scoreChanged: named('score_changed'),
    };
  }
  return { summaries, cases, differences };
}
