import type { Projector } from './projector.js';

export const webhooksProjectors: Projector[] = [];
