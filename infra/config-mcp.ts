import { z } from 'zod';

/** Environment variables of the mcp context (spread into configSchema; README's configuration table mirrors it). */
export const mcpConfigShape = {} satisfies Record<string, z.ZodType>;
