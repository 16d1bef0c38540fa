import type { Projector } from './projector.js';

// Being written (issue 4).
export const flowProjectors: Projector[] = [];
