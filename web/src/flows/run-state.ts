import { createContext, useContext } from 'react';

/** What a run said about one node: from the live stream's frames (or the process when it loads). */
export interface NodeRun {
  status: 'running' | 'completed' | 'failed' | 'skipped';
  output?: unknown;
  error?: { code: string; message: string } | null;
  usage?: { total_tokens?: number; cost?: number; prompt_tokens?: number; completion_tokens?: number } | null;
  executionTime?: number | null;
  skipReason?: string;
}

export type RunNodes = Record<string, NodeRun>;

/** The nodes of the run on show, read by each node on the canvas to colour itself. */
export const RunNodesContext = createContext<RunNodes>({});
export const useNodeRun = (nodeId: string): NodeRun | undefined => useContext(RunNodesContext)[nodeId];

/** Node types by `data.nodeType`, for the nodes' labels. */
export const NodeLabelsContext = createContext<Map<string, string>>(new Map());

interface Frame {
  type?: string;
  data?: Record<string, unknown>;
}

/** Folds one stream frame's event into the nodes' run states; other events leave them as they are. */
export function applyRunEvent(nodes: RunNodes, frame: Frame): RunNodes {
  const d = frame.data ?? {};
  const nodeId = typeof d.nodeId === 'string' ? d.nodeId : null;
  if (!nodeId) return nodes;
  switch (frame.type) {
    case 'NodeStarted':
      return { ...nodes, [nodeId]: { status: 'running' } };
    case 'NodeCompleted':
      return { ...nodes, [nodeId]: { status: 'completed', output: d.output, usage: d.usage as NodeRun['usage'], executionTime: d.executionTime as number } };
    case 'NodeFailed':
      return { ...nodes, [nodeId]: { status: 'failed', error: d.error as NodeRun['error'], executionTime: d.executionTime as number } };
    case 'NodeSkipped':
      return { ...nodes, [nodeId]: { status: 'skipped', skipReason: String(d.reason ?? '') } };
    default:
      return nodes;
  }
}
