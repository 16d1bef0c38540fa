import { z } from 'zod';
import type { FlowCommandOf } from './commands.js';
import type { FlowEvent } from './events.js';
import { requireFlow, validationFailed } from './guards.js';
import { jsonEqual } from './json.js';
import { mcpExposureShape } from './mcp-exposure.js';
import type { FlowState } from './state.js';
import { issuesToProblems } from './validate-node.js';

const exposureSchema = z.object(mcpExposureShape);

/** `toolName` was resolved by the caller (given, or sanitized from the flow's name). */
export function setMcpExposure(command: FlowCommandOf<'SetMcpExposure'>, state: FlowState): FlowEvent[] {
  requireFlow(state, command.scope);
  const next = { enabled: command.enabled, toolName: command.toolName, description: command.description, inputSchema: command.inputSchema };
  const parsed = exposureSchema.safeParse(next);
  if (!parsed.success) throw validationFailed(issuesToProblems(parsed.error.issues, 'body', next));
  const current = state.mcp;
  if (
    current &&
    current.enabled === next.enabled &&
    current.toolName === next.toolName &&
    current.description === next.description &&
    jsonEqual(current.inputSchema, next.inputSchema)
  ) {
    return [];
  }
  return [{ type: 'FlowMcpExposureSet', data: { ...parsed.data, at: command.at } }];
}
