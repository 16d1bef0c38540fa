import type { Projector } from './projector.js';

export const documentsProjectors: Projector[] = [];
