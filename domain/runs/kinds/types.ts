import type { NodeType } from '../../flows/node-data.js';
import type { RunNode } from '../definition.js';
import type { NodeUsage } from '../events.js';
import type { NodeInputs } from '../inputs.js';

/**
 * The one interface every node kind implements (DESIGN.md section 5). The domain declares it; the
 * kinds that need the outside world (llm, webhook, mcp_tool, memory) are implemented by the
 * execution consumer with the capabilities below, which it passes in. The capability shapes are
 * the least those kinds need; adapters behind them live in infra/.
 */
export interface LlmRequest {
  provider: string;
  model: string;
  prompt: string;
  temperature?: number;
  maxTokens?: number;
  signal: AbortSignal;
}
export interface LlmAnswer {
  text: string;
  usage: NodeUsage;
  metadata?: Record<string, unknown>;
}
export interface LlmCapability {
  complete(request: LlmRequest): Promise<LlmAnswer>;
}

export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Milliseconds. */
  timeoutMs: number;
  signal: AbortSignal;
}
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the response says so, else text. */
  body: unknown;
}
export interface HttpCapability {
  request(request: HttpRequest): Promise<HttpAnswer>;
}

export interface NodeKindContext extends NodeInputs {
  processId: string;
  flowId: string;
  /** Aborted when the run is stopped or fails elsewhere: kinds pass it to every call they make. */
  signal: AbortSignal;
  llm?: LlmCapability;
  http?: HttpCapability;
  /** Resolves after `ms` milliseconds, rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export interface NodeKindResult {
  output: unknown;
  metadata?: Record<string, unknown>;
  usage?: NodeUsage;
}

export interface NodeKind {
  type: NodeType;
  /** `node.data` is the effective data (overrideConfig applied, see effectiveNodeData). */
  execute(node: RunNode, context: NodeKindContext): Promise<NodeKindResult>;
}
