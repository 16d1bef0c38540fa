import type { DragEvent } from 'react';
import type { NodeTypeInfo } from './api';
import { DRAG_TYPE } from './canvas';

/**
 * The node types to add: drag one onto the canvas, or press Enter (or click) on it to add it in the
 * middle of the view. Workflow-only kinds are listed too; a plain run fails them, as the type says.
 */
export function Palette({ types, disabled, onAdd }: { types: NodeTypeInfo[]; disabled: boolean; onAdd: (nodeType: string) => void }) {
  const onDragStart = (e: DragEvent, nodeType: string) => {
    e.dataTransfer.setData(DRAG_TYPE, nodeType);
    e.dataTransfer.effectAllowed = 'copy';
  };
  return (
    <nav className="flows-palette" aria-label="Node types">
      <h2>Add a node</h2>
      <p className="muted flows-hint">Drag onto the canvas, or press Enter.</p>
      <ul>
        {types.map((t) => (
          <li key={t.nodeType}>
            <button
              type="button"
              className="secondary flows-palette-item"
              draggable={!disabled}
              disabled={disabled}
              onDragStart={(e) => onDragStart(e, t.nodeType)}
              onClick={() => onAdd(t.nodeType)}
              title={t.description}
              data-node-type={t.nodeType}
            >
              {t.label}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
