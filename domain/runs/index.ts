/**
 * The run aggregate (stream `run-<processId>`) and the pure half of execution: the scheduler that
 * decides what runs next, conditions, templates, node inputs and the kinds that need no I/O.
 * The execution consumer does the I/O and records each step through runDecider's commands.
 */
export * from './commands.js';
export * from './events.js';
export * from './state.js';
export * from './limits.js';
export { RUN_ERROR_CODES, RunInputError, type RunErrorCode } from './errors.js';
export { toRunDefinition, graphIndex, ancestorsOf, conditionsOf, continuesOnError, runDefinitionSchema, type RunDefinition, type RunNode, type RunEdge } from './definition.js';
export { planReplay, recordedResult, SIDE_EFFECT_NODE_TYPES, type ReplayRequest } from './replay.js';
export { nextSteps, type NextSteps, type SkipStep } from './scheduler.js';
export { runOutputs, boundRunOutputs } from './outputs.js';
export { nodeInputs, effectiveNodeData, type NodeInputs } from './inputs.js';
export { renderTemplate, renderValue, renderValueAsText, unresolvedPlaceholders, TEMPLATE_ROOTS, type TemplateContext } from './template.js';
export { evaluateCondition, conditionLabel, conditionalResultOf, conditionQuestion, parseYesNo, outputText, asNumber, isEmptyOutput } from './conditions.js';
export { safeRegexTest, compileSafeRegex, type SafeRegex } from './regex.js';
export * from './kinds/index.js';
export { decideRun, runStreamId } from './decide.js';

import { fold, type Decider } from '../shared/decider.js';
import type { RunCommand } from './commands.js';
import { decideRun } from './decide.js';
import { runEventSchemas, type RunEvent } from './events.js';
import { evolveRun, initialRunState, isFinished, type RunState } from './state.js';

export const runDecider: Decider<RunCommand, RunState, RunEvent> = {
  initialState: initialRunState,
  eventSchemas: runEventSchemas,
  evolve: evolveRun,
  decide: decideRun,
  settled: (state) => state.exists && isFinished(state.status),
};

/** The state after all the given events (domain events or recorded ones straight from the store). */
export const foldRun = (events: Iterable<{ type: string; data: unknown }>): RunState => fold(evolveRun, initialRunState, events as Iterable<RunEvent>);
