import type { Projector } from './projector.js';

export const memoryProjectors: Projector[] = [];
