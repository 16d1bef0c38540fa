import { ConsoleError } from '../session';
import { ErrorNote } from '../ui';
import type { CanvasNode } from './model';

interface Problem {
  nodeId: string | null;
  text: string;
}

/**
 * A refused save in the canvas's words: `body.nodes.3.data.model: must not be empty` becomes
 * "LLM 4 · model: must not be empty", with a button that selects that node. The index is the
 * node's place in what was sent, which is the canvas's order.
 */
function problemsOf(error: unknown, nodes: CanvasNode[], nameOf: (n: CanvasNode) => string): Problem[] | null {
  if (!(error instanceof ConsoleError) || error.apiError.code !== 'VALIDATION_FAILED') return null;
  const fields = (error.apiError.details as { fields?: Array<{ field: string; message: string }> } | undefined)?.fields;
  if (!fields?.length) return null;
  return fields.map(({ field, message }) => {
    const match = /^body\.nodes\.(\d+)\.?(?:data\.)?(.*)$/.exec(field);
    const node = match ? nodes[Number(match[1])] : undefined;
    if (!node) return { nodeId: null, text: `${field}: ${message}` };
    return { nodeId: node.id, text: `${nameOf(node)} · ${match![2] || 'node'}: ${message}` };
  });
}

export function SaveProblems({ error, nodes, nameOf, onSelect }: { error: unknown; nodes: CanvasNode[]; nameOf: (n: CanvasNode) => string; onSelect: (nodeId: string) => void }) {
  const problems = problemsOf(error, nodes, nameOf);
  if (!problems) return <ErrorNote error={error} />;
  return (
    <div className="error" role="alert" data-code="VALIDATION_FAILED">
      <p className="flows-problems-title">Not saved: fix these first.</p>
      <ul>
        {problems.map((p, i) => (
          <li key={i}>
            {p.text}{' '}
            {p.nodeId ? (
              <button type="button" className="link" onClick={() => onSelect(p.nodeId!)}>
                Show the node
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
