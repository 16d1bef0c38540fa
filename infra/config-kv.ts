import { z } from 'zod';

/** Environment variables of the kv context (spread into configSchema; README's configuration table mirrors it). */
export const kvConfigShape = {} satisfies Record<string, z.ZodType>;
