import { z } from 'zod';

/** Environment variables of the documents context (spread into configSchema; README's configuration table mirrors it). */
export const documentsConfigShape = {} satisfies Record<string, z.ZodType>;
