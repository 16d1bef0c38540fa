import { conditionKind } from './condition.js';
import { delayKind } from './delay.js';
import { inputKind } from './input.js';
import { outputKind } from './output.js';
import { transformKind } from './transform.js';
import type { NodeKind } from './types.js';

export * from './types.js';
export { conditionKind, conditionOutput } from './condition.js';
export { delayKind, delayMs } from './delay.js';
export { inputKind, inputOutput } from './input.js';
export { outputKind, outputKeyOf, outputOutput } from './output.js';
export { transformKind, transformOutput } from './transform.js';

/** The kinds that need nothing from the outside world (delay only a sleep); the consumer adds llm, webhook, mcp_tool, memory. */
export const PURE_NODE_KINDS: readonly NodeKind[] = [transformKind, conditionKind, inputKind, outputKind, delayKind];
