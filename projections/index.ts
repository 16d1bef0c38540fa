import type { Projector } from './projector.js';
import { probesProjector } from './probes.js';

export const allProjectors: Projector[] = [probesProjector];
