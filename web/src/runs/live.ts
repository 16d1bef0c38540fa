import type { NodeView, ProcessView } from './types';

/**
 * A run's view moved on by one frame of its live stream (`GET /processes/{id}/stream`): the frame's
 * data is the event as `/events` lists it, `{type, revision, data}`. Replaying a frame already
 * applied leaves the view as it was, so the stream may start from the run's first event.
 */
interface RunEventFrame {
  type: string;
  data: Record<string, unknown>;
}

const RUN_STATUS_OF: Record<string, string> = {
  RunStarted: 'running',
  RunCompleted: 'completed',
  RunFailed: 'failed',
  RunStopped: 'stopped',
  RunTimedOut: 'timed_out',
};

export function applyRunFrame(view: ProcessView, frame: unknown): ProcessView {
  const event = frame as RunEventFrame | null;
  if (!event || typeof event.type !== 'string' || !event.data) return view;
  const runStatus = RUN_STATUS_OF[event.type];
  if (runStatus) return { ...view, status: runStatus };
  const nodeId = event.data.nodeId as string | undefined;
  if (!nodeId || !view.nodes.some((n) => n.nodeId === nodeId)) return view;
  const patch = nodePatch(event);
  if (!patch) return view;
  return { ...view, nodes: view.nodes.map((n) => (n.nodeId === nodeId ? { ...n, ...patch } : n)) };
}

function nodePatch({ type, data }: RunEventFrame): Partial<NodeView> | null {
  const at = (data.at as string | undefined) ?? null;
  switch (type) {
    case 'NodeStarted':
      return { status: 'running', startedAt: at, error: null };
    case 'NodeCompleted':
      return {
        status: 'completed',
        output: data.output,
        usage: (data.usage as NodeView['usage']) ?? null,
        executionTime: (data.executionTime as number | undefined) ?? null,
        finishedAt: at,
      };
    case 'NodeFailed':
      return { status: 'failed', error: (data.error as NodeView['error']) ?? null, executionTime: (data.executionTime as number | undefined) ?? null, finishedAt: at };
    case 'NodeSkipped':
      return { status: 'skipped', skipReason: (data.reason as string | undefined) ?? null, finishedAt: at };
    default:
      return null;
  }
}
