import { useEffect, useRef } from 'react';
import { ErrorNote, formatTime, useAction } from '../ui';
import type { Flow } from './api';

/**
 * The merge prompt: someone else saved the flow after it was opened here. Keeping theirs drops the
 * changes made here; keeping mine writes them over the version that is there now.
 */
export function ConflictPrompt({ theirs, onReload, onOverwrite }: { theirs: Flow; onReload: () => Promise<void>; onOverwrite: () => Promise<void> }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const reload = useAction(onReload);
  const overwrite = useAction(onOverwrite);
  return (
    <div className="flows-conflict" role="alertdialog" aria-modal="false" aria-labelledby="conflict-title" aria-describedby="conflict-text">
      <h2 id="conflict-title" tabIndex={-1} ref={heading}>
        The flow changed since you opened it
      </h2>
      <p id="conflict-text">
        It is now at version {theirs.version} (saved {formatTime(theirs.updatedAt)}), with {theirs.nodes.length} nodes and {theirs.edges.length} connections. Keep their
        version (your unsaved changes are dropped) or overwrite it with yours?
      </p>
      <div className="flows-actions">
        <button type="button" className="secondary" disabled={reload.pending || overwrite.pending} onClick={() => void reload.run()}>
          Reload theirs
        </button>
        <button type="button" className="danger" disabled={reload.pending || overwrite.pending} onClick={() => void overwrite.run()}>
          Overwrite with mine
        </button>
      </div>
      <ErrorNote error={reload.error ?? overwrite.error} />
    </div>
  );
}
