import { RunInputError, type NodeKind } from '../../domain/runs/index.js';
import type { Services } from '../../infra/services.js';

/** `data.nodeType: "memory"`: runs a memory operation. */
export function memoryKind(_services: Services): NodeKind {
  return {
    type: 'memory',
    async execute() {
      throw new RunInputError('CAPABILITY_MISSING', 'memory nodes are not available yet');
    },
  };
}
