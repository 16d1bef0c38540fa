import type { Projector } from './projector.js';

export const messagingProjectors: Projector[] = [];
