import type { RunNode } from '../definition.js';
import type { NodeInputs } from '../inputs.js';
import { renderValue } from '../template.js';
import type { NodeKind } from './types.js';

/**
 * An output node: its `data.template` rendered when it has one, else its input (previous, or the
 * run's inputs for a lone node). Under which name it appears in the run's result is runOutputs'
 * business (`data.outputKey`, else the node id).
 */
export function outputOutput(node: RunNode, context: NodeInputs): unknown {
  const template = node.data.template;
  return typeof template === 'string' && template !== '' ? renderValue(template, context) : context.input;
}

/** The name of an output node's value in the run's result. */
export const outputKeyOf = (node: RunNode): string => (typeof node.data.outputKey === 'string' && node.data.outputKey !== '' ? node.data.outputKey : node.id);

export const outputKind: NodeKind = {
  type: 'output',
  execute: async (node, context) => ({ output: outputOutput(node, context) }),
};
