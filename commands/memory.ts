import { memoryDecider, memoryStreamId, type MemoryCommand } from '../domain/memory/index.js';
import type { EventStore } from '../ports/event-store.js';
import { handleAtContextTime, type CommandContext, type WithoutAt } from './handle.js';

/**
 * Every memory write goes through here: one stream per memory (`memory-<id>`), time from the
 * context. Save appends with "stream must not exist" semantics through the decider (409
 * MEMORY_EXISTS); update and delete check tenancy and scope in the decider (404 MEMORY_NOT_FOUND).
 */
export function executeMemoryCommand(store: EventStore, context: CommandContext, command: WithoutAt<MemoryCommand>) {
  return handleAtContextTime(store, context, memoryStreamId(command.memoryId), memoryDecider, command);
}
