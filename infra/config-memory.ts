import { z } from 'zod';

/** Environment variables of the memory context (spread into configSchema; README's configuration table mirrors it). */
export const memoryConfigShape = {} satisfies Record<string, z.ZodType>;
