import { z } from 'zod';

/** Environment variables of the webhooks context (spread into configSchema; README's configuration table mirrors it). */
export const webhooksConfigShape = {} satisfies Record<string, z.ZodType>;
