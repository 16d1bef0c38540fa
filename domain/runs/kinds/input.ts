import type { RunNode } from '../definition.js';
import type { NodeInputs } from '../inputs.js';
import type { NodeKind } from './types.js';

/** An input node: the run input named by `data.inputKey` (null when absent), or all the inputs. */
export function inputOutput(node: RunNode, context: Pick<NodeInputs, 'inputs'>): unknown {
  const key = node.data.inputKey;
  if (typeof key !== 'string' || key === '') return context.inputs;
  return Object.hasOwn(context.inputs, key) ? context.inputs[key] : null;
}

export const inputKind: NodeKind = {
  type: 'input',
  execute: async (node, context) => ({ output: inputOutput(node, context) }),
};
