import type { NodeInputs } from '../inputs.js';
import type { NodeKind } from './types.js';

/**
 * A condition node passes its input on unchanged; its `data.conditions` (evaluated on that output
 * like any node's) choose the edges.
 */
export const conditionOutput = (context: Pick<NodeInputs, 'input'>): unknown => context.input;

export const conditionKind: NodeKind = {
  type: 'condition',
  execute: async (_node, context) => ({ output: conditionOutput(context) }),
};
