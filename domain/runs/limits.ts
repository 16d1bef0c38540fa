import { MAX_DELAY_MS, MAX_WRITE_BYTES } from '../flows/limits.js';

/**
 * The documented limits of a run. Every event of a run travels whole through the event store and
 * the bus, so each one stays under the flows' MAX_WRITE_BYTES (768 KiB; Kafka's and EventStoreDB's
 * defaults are 1 MiB).
 */
/** RunRequested carries the flow snapshot and the inputs: both together must fit in one event. */
export const MAX_RUN_REQUEST_BYTES = MAX_WRITE_BYTES;
/** A NodeCompleted (output, metadata, condition results) as JSON. Bigger outputs fail the node. */
export const MAX_NODE_EVENT_BYTES = MAX_WRITE_BYTES;
/** RunCompleted's outputs; beyond this each value is cut to a JSON preview (the full values stay in NodeCompleted). */
export const MAX_RUN_OUTPUTS_BYTES = 512 * 1024;
/**
 * How often a node may be started: a node still running when its worker died is started again on
 * resume, but a node that kills its worker every time (out of memory, say) must not do so forever.
 */
export const MAX_NODE_ATTEMPTS = 3;
export const MAX_ERROR_MESSAGE_LENGTH = 10_000;
export const MAX_SKIP_REASON_LENGTH = 1_000;
export const MAX_RUN_DELAY_MS = MAX_DELAY_MS;

/** Regex conditions run on a linear-time engine (regex.ts); these bound its work. */
export const MAX_REGEX_PATTERN_LENGTH = 1_000;
/** UTF-16 code units of the text a regex condition looks at. */
export const MAX_REGEX_INPUT_LENGTH = 200_000;
/** States of the compiled automaton (each character, class or repetition copy is one or two). */
export const MAX_REGEX_STATES = 2_000;
/** states × input length: the worst-case number of automaton steps (about 0.2 s on one core). */
export const MAX_REGEX_WORK = 10_000_000;

/** The output text put into a usePrompt condition's question; longer outputs are cut. */
export const MAX_QUESTION_OUTPUT_LENGTH = 20_000;
/** A rendered template; beyond it rendering fails rather than build a giant prompt. */
export const MAX_RENDERED_LENGTH = 1_000_000;

export const RUN_LIMITS = {
  runRequestBytes: MAX_RUN_REQUEST_BYTES,
  nodeEventBytes: MAX_NODE_EVENT_BYTES,
  runOutputsBytes: MAX_RUN_OUTPUTS_BYTES,
  nodeAttempts: MAX_NODE_ATTEMPTS,
  errorMessageLength: MAX_ERROR_MESSAGE_LENGTH,
  regexPatternLength: MAX_REGEX_PATTERN_LENGTH,
  regexInputLength: MAX_REGEX_INPUT_LENGTH,
  regexStates: MAX_REGEX_STATES,
  regexWork: MAX_REGEX_WORK,
  questionOutputLength: MAX_QUESTION_OUTPUT_LENGTH,
  renderedLength: MAX_RENDERED_LENGTH,
  delayMs: MAX_RUN_DELAY_MS,
} as const;
