import type { Projector } from './projector.js';

// Being written (issue 3).
export const orgProjectors: Projector[] = [];
