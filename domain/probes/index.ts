import { decider, type Decider } from '../shared/decider.js';
import { decideProbe, type ProbeCommand } from './decide.js';
import { probeEventSchemas, type ProbeEvent } from './events.js';
import { evolveProbe, initialProbeState, type ProbeState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';

/**
 * The probe is the platform's own small aggregate: it exercises command handling, uniqueness
 * through a reservation, projection and read-your-writes end to end (smoke tests, benchmarks,
 * and operators checking a deployment), without depending on any business context.
 */
export const probeDecider: Decider<ProbeCommand, ProbeState, ProbeEvent> = decider(initialProbeState, evolveProbe, decideProbe, probeEventSchemas);
