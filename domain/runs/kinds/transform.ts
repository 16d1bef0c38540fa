import { renderValue, type TemplateContext } from '../template.js';
import type { RunNode } from '../definition.js';
import type { NodeKind } from './types.js';

/** The output of a transform node: its `data.template` rendered (a single placeholder keeps its value's type). */
export function transformOutput(node: RunNode, context: TemplateContext): unknown {
  return renderValue(typeof node.data.template === 'string' ? node.data.template : '', context);
}

export const transformKind: NodeKind = {
  type: 'transform',
  execute: async (node, context) => ({ output: transformOutput(node, context) }),
};
