import { z } from 'zod';
import { MAX_FLOW_DESCRIPTION_LENGTH, MAX_TRIGGER_INPUT_SCHEMA_BYTES, boundedJsonObject } from './limits.js';

/**
 * A flow exposed as a tool of the service's own MCP server (`/api/mcp`, issue 32 item 5): its
 * tool name (unique in the flow's tenant, which commands/flows-mcp.ts holds with a reservation),
 * its description and the input schema it was given (the flow trigger's `inputSchema` wins when
 * the flow declares one: see `toolInputSchemaOf`).
 */
export interface McpExposure {
  enabled: boolean;
  toolName: string;
  description: string | null;
  inputSchema: Record<string, unknown> | null;
  at: string;
}

/** MCP tool names: letters, digits, `_` and `-`, 1–64 characters (what every MCP client accepts). */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const mcpToolNameSchema = z.string().regex(MCP_TOOL_NAME_PATTERN, 'must be 1-64 letters, digits, "_" or "-"');

/** A tool's input schema: a JSON Schema of an object (MCP requires `type: "object"`), at most 64 KiB. */
export const mcpInputSchemaSchema = boundedJsonObject(MAX_TRIGGER_INPUT_SCHEMA_BYTES).refine((s) => s.type === 'object', {
  message: 'must be a JSON Schema with type "object"',
  path: ['type'],
});

export const mcpExposureShape = {
  enabled: z.boolean(),
  toolName: mcpToolNameSchema,
  description: z.string().max(MAX_FLOW_DESCRIPTION_LENGTH).nullable(),
  inputSchema: mcpInputSchemaSchema.nullable(),
};

/** The tool name a flow gets when none is given: its name with anything else than [A-Za-z0-9_-] as `_`. */
export function sanitizeToolName(name: string, flowId: string): string {
  const cleaned = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_+/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '')
    .slice(0, 64);
  return cleaned || `flow_${flowId.replace(/[^A-Za-z0-9]/g, '').slice(0, 12)}`;
}

/** Input schema of a tool nobody described: any object. */
export const OPEN_INPUT_SCHEMA: Record<string, unknown> = Object.freeze({ type: 'object', additionalProperties: true }) as Record<string, unknown>;

/**
 * The tool's input schema: the flow's declared inputs (its trigger's `inputSchema`, when that is an
 * object schema), else the schema given with the exposure, else any object.
 */
export function toolInputSchemaOf(triggerSchema: Record<string, unknown> | null, given: Record<string, unknown> | null): Record<string, unknown> {
  if (triggerSchema && triggerSchema.type === 'object') return triggerSchema;
  return given ?? OPEN_INPUT_SCHEMA;
}

