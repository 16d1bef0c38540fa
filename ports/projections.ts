/** What the rest of the system sees of the projectors: their status, read-your-writes, and rebuilds. */
export interface ProjectionStatus {
  name: string;
  categories: string[];
  state: 'running' | 'rebuilding' | 'stopped' | 'failed' | 'remote';
  position: number;
  head: number;
  /** Events of its categories not yet projected (capped). */
  lag: number;
  lastError: string | null;
  /** How long the batch in flight has been running (ms); null between batches or where the projectors run elsewhere. */
  busyMs: number | null;
}

export interface RebuildResult {
  name: string;
  events: number;
  durationMs: number;
}

/** Carries out a rebuild where the projectors run (the projection-control consumer's port). */
export interface ProjectionRebuilder {
  has(name: string): boolean;
  /** Drops the projector's collections and checkpoint and projects its categories again from the start. */
  rebuild(name: string): Promise<RebuildResult>;
}

export interface Projections extends ProjectionRebuilder {
  /** `local`: the projectors run in this process; `remote`: positions come from the shared checkpoints. */
  readonly mode: 'local' | 'remote';
  names(): string[];
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): Promise<ProjectionStatus[]>;
  /**
   * Read-your-writes: resolves true once every projector reading `streamId`'s category has
   * reached `position`, false when `timeoutMs` passed first (the write still stands).
   */
  waitFor(position: number, streamId: string, timeoutMs: number): Promise<boolean>;
}
