import type { Projector } from './projector.js';

export const mcpProjectors: Projector[] = [];
