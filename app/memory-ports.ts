import type { Config } from '../infra/config/index.js';
import type { EventStore } from '../ports/event-store.js';
import type { Logger } from '../ports/logger.js';
import type { MemoryPorts } from '../ports/memory.js';
import type { ReadStore } from '../ports/read-store.js';
import { memoryQueries } from '../projections/memory-search.js';
import { embeddingsClientFor } from '../infra/memory/embeddings.js';
import { memoryReadPosition } from '../infra/memory/read-position.js';

/** The memory context's ports, wired from configuration (the composition root calls this once). */
export function memoryPorts(config: Config, eventStore: EventStore, readStore: ReadStore, logger: Logger, newId: () => string): MemoryPorts {
  return { eventStore, memories: { ...memoryQueries(readStore), readPosition: memoryReadPosition(eventStore, readStore.checkpoints) }, embeddings: embeddingsClientFor(config), settings: config, logger, newId };
}
