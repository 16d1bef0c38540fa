import type { ConnectionInput, FlowEdge, HistoryStatus, TriggerMethod, Usage } from './events.js';
import type { Position } from './node-data.js';
import type { FlowScope, NodePatch } from './state.js';

/**
 * Commands of the flow aggregate (stream `flow-<id>`). Ids, times and key hashes come in the
 * command. Every command but CreateFlow takes an optional `scope`: when given, a flow outside it
 * answers FLOW_NOT_FOUND (404), exactly like a missing one, so another tenant learns nothing.
 * Consumers acting for the system (the run engine) leave it out.
 */
interface Base {
  at: string;
  scope?: FlowScope;
}

/** A node as a request gives it; `data` is validated per `data.nodeType` by the decider. */
export interface NodeInput {
  type: string;
  position: Position;
  data: Record<string, unknown>;
}
export interface NodeWithId extends NodeInput {
  id: string;
}
export type EdgeInput = FlowEdge;

export interface TriggerSettingsPatch {
  enabled?: boolean;
  allowedMethods?: TriggerMethod[];
  inputSchema?: Record<string, unknown> | null;
}

export type FlowCommand =
  | {
      type: 'CreateFlow';
      flowId: string;
      name: string;
      description?: string;
      ownerId: string;
      orgId: string | null;
      workspaceId: string | null;
      /** Optional initial graph (AI generation, app scaffolding): validated like ReplaceFlow. */
      nodes?: NodeWithId[];
      edges?: EdgeInput[];
      at: string;
    }
  | (Base & { type: 'ReplaceFlow'; name: string; description?: string; nodes: NodeWithId[]; edges: EdgeInput[]; /** Set when the graph is an earlier version brought back (POST …/versions/{version}/restore). */ restoredFrom?: number })
  | (Base & { type: 'DeleteFlow' })
  | (Base & { type: 'ArchiveFlow' })
  | (Base & { type: 'UnarchiveFlow' })
  | (Base & { type: 'RenameFlow'; name: string })
  | (Base & { type: 'AddNode'; nodeId: string; node: NodeInput })
  /** Partial: only what `patch` gives changes; its `data` keys are merged shallowly over the node's. */
  | (Base & { type: 'UpdateNode'; nodeId: string; patch: NodePatch })
  | (Base & { type: 'DeleteNode'; nodeId: string })
  /** Copies type and data (not edges, trigger or history) to `newNodeId`, shifted by `offset` (default +40/+40). */
  | (Base & { type: 'DuplicateNode'; nodeId: string; newNodeId: string; offset?: Position })
  | (Base & { type: 'AddConnection'; connectionId: string; connection: ConnectionInput })
  /** Fields given replace the connection's; `null` clears a handle or label. */
  | (Base & { type: 'UpdateConnection'; connectionId: string; changes: Partial<ConnectionInput> })
  | (Base & { type: 'RemoveConnection'; connectionId: string })
  /** All or none: one ConnectionAdded per connection, in order, in one decision. */
  | (Base & { type: 'AddConnections'; connections: Array<{ connectionId: string; connection: ConnectionInput }> })
  /** All or none; repeated ids count once. */
  | (Base & { type: 'RemoveConnections'; connectionIds: string[] })
  | (Base & { type: 'UpdateFlowTrigger' } & TriggerSettingsPatch)
  /** `keyHash` = sha256 hex of the new key, which the caller generated and shows once. */
  | (Base & { type: 'RegenerateFlowTriggerKey'; keyHash: string })
  | (Base & { type: 'UpdateNodeTrigger'; nodeId: string } & TriggerSettingsPatch)
  | (Base & { type: 'RegenerateNodeTriggerKey'; nodeId: string; keyHash: string })
  /** Exposes the flow as a tool of the service's MCP server (or stops); the caller resolved `toolName` and holds it (commands/flows-mcp.ts). */
  | (Base & { type: 'SetMcpExposure'; enabled: boolean; toolName: string; description: string | null; inputSchema: Record<string, unknown> | null })
  /** From the run engine. Idempotent by `entryId`: recording the same entry again is no event. */
  | (Base & {
      type: 'RecordNodeExecution';
      nodeId: string;
      entryId: string;
      processId: string;
      status: HistoryStatus;
      output: unknown;
      error?: string | null;
      usage?: Usage | null;
      /** Milliseconds. */
      executionTime: number;
    })
  | (Base & { type: 'DeleteHistoryEntry'; nodeId: string; entryId: string })
  | (Base & { type: 'ClearNodeHistory'; nodeId: string })
  | (Base & { type: 'ClearFlowHistory' })
  /**
   * From the reseal operation: `nodes` are the nodes' secret-bearing fields, sealed; `clearEvents`
   * and `rewrittenInPlace` say what was found in the log and done to it. Also for a deleted flow.
   */
  | (Base & { type: 'ResealFlowSecrets'; nodes: Array<{ nodeId: string; data: Record<string, unknown> }>; clearEvents: number; rewrittenInPlace: boolean });

export type FlowCommandOf<T extends FlowCommand['type']> = Extract<FlowCommand, { type: T }>;
