import { Handle, Position, type NodeProps } from '@xyflow/react';
import { useContext } from 'react';
import type { CanvasNode } from './model';
import { NodeLabelsContext, useNodeRun } from './run-state';

const STATUS_TEXT = { running: 'running', completed: 'done', failed: 'failed', skipped: 'skipped' } as const;

/** A node on the canvas: its name, its type, and the state the run on show gave it (data-status). */
export function FlowNodeView({ id, data, selected }: NodeProps<CanvasNode>) {
  const run = useNodeRun(id);
  const labels = useContext(NodeLabelsContext);
  const type = String(data.nodeType ?? '');
  const name = typeof data.agentName === 'string' && data.agentName.trim() ? data.agentName : labels.get(type) ?? id;
  return (
    <div className={`flow-node${selected ? ' selected' : ''}`} data-status={run?.status ?? 'idle'} data-node-type={type}>
      <Handle type="target" position={Position.Top} aria-label={`input of ${name}`} />
      <div className="flow-node-name">{name}</div>
      <div className="flow-node-type">
        {labels.get(type) ?? (type || 'node')}
        {run ? <span className="flow-node-status"> · {STATUS_TEXT[run.status]}</span> : null}
      </div>
      <Handle type="source" position={Position.Bottom} aria-label={`output of ${name}`} />
    </div>
  );
}

export const NODE_RENDERERS = { flow: FlowNodeView };
