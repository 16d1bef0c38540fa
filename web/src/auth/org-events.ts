/**
 * "The organizations I belong to changed" (an invitation accepted): the header's switcher loads
 * once on mount and after a token change, and this tells it to load once more without polling.
 */
const listeners = new Set<() => void>();

export function onOrgsChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function orgsChanged(): void {
  for (const listener of listeners) listener();
}
