import { decider, type Decider } from '../shared/decider.js';
import { decideDataset, decideEvaluation, type DatasetCommand, type EvaluationCommand } from './decide.js';
import { datasetEventSchemas, evaluationEventSchemas, type DatasetEvent, type EvaluationEvent } from './events.js';
import { evolveDataset, evolveEvaluation, initialDatasetState, initialEvaluationState, type DatasetState, type EvaluationState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './scorers.js';
export * from './report.js';

/** A dataset of cases (`evaldataset-<id>`): inputs and expected outputs, from recorded runs, uploads or typed in. */
export const datasetDecider: Decider<DatasetCommand, DatasetState, DatasetEvent> = decider(initialDatasetState, evolveDataset, decideDataset, datasetEventSchemas);

/** One evaluation (`evaluation-<id>`): a flow version (or two) over a dataset's cases, scored case by case. */
export const evaluationDecider: Decider<EvaluationCommand, EvaluationState, EvaluationEvent> = {
  ...decider(initialEvaluationState, evolveEvaluation, decideEvaluation, evaluationEventSchemas),
  settled: (s) => s.status !== 'running',
};
export * from './jsonl.js';
