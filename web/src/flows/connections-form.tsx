import { useState } from 'react';
import type { CanvasEdge, CanvasNode } from './model';

/**
 * The selected node's outgoing connections, for the keyboard: the same edits as dragging handle to
 * handle or deleting an edge on the canvas.
 */
export function ConnectionsForm({ node, nodes, edges, readOnly, nameOf, onConnect, onRemove }: {
  node: CanvasNode;
  nodes: CanvasNode[];
  edges: CanvasEdge[];
  readOnly: boolean;
  nameOf: (n: CanvasNode) => string;
  onConnect: (source: string, target: string) => void;
  onRemove: (edgeId: string) => void;
}) {
  const outgoing = edges.filter((e) => e.source === node.id);
  const candidates = nodes.filter((n) => n.id !== node.id && !outgoing.some((e) => e.target === n.id));
  const [target, setTarget] = useState('');
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const chosen = candidates.some((n) => n.id === target) ? target : (candidates[0]?.id ?? '');
  return (
    <fieldset className="flows-connections" disabled={readOnly}>
      <legend>Connections from {nameOf(node)}</legend>
      {outgoing.length === 0 ? <p className="muted flows-hint">None yet.</p> : null}
      <ul>
        {outgoing.map((e) => {
          const to = byId.get(e.target);
          const name = to ? nameOf(to) : e.target;
          return (
            <li key={e.id}>
              → {name}{' '}
              <button type="button" className="link" onClick={() => onRemove(e.id)} aria-label={`Remove the connection to ${name}`}>
                Remove
              </button>
            </li>
          );
        })}
      </ul>
      {candidates.length > 0 ? (
        <div className="flows-inline">
          <label className="flows-inline">
            <span>Connect to</span>
            <select value={chosen} onChange={(e) => setTarget(e.target.value)}>
              {candidates.map((n) => (
                <option key={n.id} value={n.id}>
                  {nameOf(n)}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="secondary" onClick={() => chosen && onConnect(node.id, chosen)}>
            Connect
          </button>
        </div>
      ) : null}
    </fieldset>
  );
}
