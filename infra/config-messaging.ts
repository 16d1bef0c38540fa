import { z } from 'zod';

/** Environment variables of the messaging context (spread into configSchema; README's configuration table mirrors it). */
export const messagingConfigShape = {} satisfies Record<string, z.ZodType>;
