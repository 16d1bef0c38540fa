import { decider, type Decider } from '../shared/decider.js';
import { decideMemory, type MemoryCommand } from './decide.js';
import { memoryEventSchemas, type MemoryEvent } from './events.js';
import { evolveMemory, initialMemoryState, type MemoryState } from './state.js';

export * from './events.js';
export * from './state.js';
export * from './decide.js';
export * from './limits.js';
export * from './rank.js';
export * from './text.js';
export * from './operations.js';
export * from './filter.js';

/** One stream per memory (`memory-<id>`). */
export const memoryDecider: Decider<MemoryCommand, MemoryState, MemoryEvent> = decider(initialMemoryState, evolveMemory, decideMemory, memoryEventSchemas);
