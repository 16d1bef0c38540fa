import type { Upcaster } from './shared/upcasting.js';

/** Every context's upcasters; none yet, since no event has changed shape since it was first stored. */
export const allUpcasters: Upcaster[] = [];
