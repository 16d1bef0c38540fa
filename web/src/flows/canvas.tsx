import { Background, Controls, MarkerType, ReactFlow, useReactFlow, type Connection, type EdgeChange, type NodeChange, type OnSelectionChangeParams } from '@xyflow/react';
import { useCallback, type DragEvent } from 'react';
import { NODE_RENDERERS } from './flow-node';
import type { CanvasEdge, CanvasNode } from './model';

export const DRAG_TYPE = 'application/x-flow-node-type';
// Arrows show which way a connection runs; they are drawn, not saved.
const EDGE_OPTIONS = { markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 } };

interface CanvasProps {
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  /** A past version on show: nothing moves, connects or deletes. */
  readOnly: boolean;
  fitOnOpen: boolean;
  onNodesChange: (changes: NodeChange<CanvasNode>[]) => void;
  onEdgesChange: (changes: EdgeChange<CanvasEdge>[]) => void;
  onConnect: (connection: Connection) => void;
  onDropType: (nodeType: string, position: { x: number; y: number }) => void;
  onSelect: (nodeId: string | null) => void;
}

/** The React Flow pane: palette items dropped on it become nodes, handles dragged to handles connect. */
export function Canvas({ nodes, edges, readOnly, fitOnOpen, onNodesChange, onEdgesChange, onConnect, onDropType, onSelect }: CanvasProps) {
  const { screenToFlowPosition } = useReactFlow();
  const onDragOver = useCallback(
    (e: DragEvent) => {
      if (readOnly || !e.dataTransfer.types.includes(DRAG_TYPE)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = 'copy';
    },
    [readOnly],
  );
  const onDrop = useCallback(
    (e: DragEvent) => {
      const nodeType = e.dataTransfer.getData(DRAG_TYPE);
      if (readOnly || !nodeType) return;
      e.preventDefault();
      onDropType(nodeType, screenToFlowPosition({ x: e.clientX, y: e.clientY }));
    },
    [readOnly, onDropType, screenToFlowPosition],
  );
  const onSelectionChange = useCallback(({ nodes: selected }: OnSelectionChangeParams) => onSelect(selected[0]?.id ?? null), [onSelect]);
  return (
    <div className="flows-canvas" onDragOver={onDragOver} onDrop={onDrop} data-readonly={readOnly ? 'true' : 'false'} aria-label={readOnly ? 'Canvas (a past version, read only)' : 'Canvas'} role="region">
      <ReactFlow<CanvasNode, CanvasEdge>
        nodes={nodes}
        edges={edges}
        nodeTypes={NODE_RENDERERS}
        defaultEdgeOptions={EDGE_OPTIONS}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={readOnly ? undefined : onConnect}
        onSelectionChange={onSelectionChange}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        deleteKeyCode={readOnly ? null : ['Delete', 'Backspace']}
        fitView={fitOnOpen}
        fitViewOptions={{ maxZoom: 1 }}
        proOptions={{ hideAttribution: true }}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
