import { addEdge, applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import { useCallback, useRef, useState } from 'react';
import { api, call, ConsoleError } from '../session';
import { getFlow, restoreVersion, type Flow } from './api';
import { definitionOf, graphOf, newId, type CanvasEdge, type CanvasNode, type Graph } from './model';

/**
 * The flow being edited: the version it was opened at, the graph as the person has it now, and
 * saving. The whole definition is saved at once (`PUT /flows/{flowId}` with `If-Match: "<version>"`):
 * one write, validated as a whole, one version per save (which is what time travel and undo walk),
 * and a 412 when someone else wrote in between, which opens the merge prompt instead of losing
 * either side's work.
 */
export function useFlowEditor(initial: Flow) {
  const [flow, setFlow] = useState(initial);
  const [graph, setGraph] = useState<Graph>(() => graphOf(initial));
  const [dirty, setDirty] = useState(false);
  const [conflict, setConflict] = useState<Flow | null>(null);
  // Changes made while a save is on its way keep the page dirty after it lands.
  const changes = useRef(0);

  const changed = useCallback(() => {
    changes.current++;
    setDirty(true);
  }, []);

  /** Shows `next` as the saved flow, replacing the graph (reload, restore, undo). */
  const replaceWith = useCallback((next: Flow) => {
    setFlow(next);
    setGraph(graphOf(next));
    setDirty(false);
    setConflict(null);
  }, []);

  const onNodesChange = useCallback(
    (list: NodeChange<CanvasNode>[]) => {
      setGraph((g) => ({ ...g, nodes: applyNodeChanges(list, g.nodes) }));
      // Selecting and measuring are not edits; a move counts once it is dropped.
      if (list.some((c) => c.type === 'remove' || c.type === 'add' || (c.type === 'position' && c.dragging === false))) changed();
    },
    [changed],
  );
  const onEdgesChange = useCallback(
    (list: EdgeChange<CanvasEdge>[]) => {
      setGraph((g) => ({ ...g, edges: applyEdgeChanges(list, g.edges) }));
      if (list.some((c) => c.type === 'remove' || c.type === 'add')) changed();
    },
    [changed],
  );
  const onConnect = useCallback(
    (c: Connection) => {
      if (c.source === c.target) return;
      setGraph((g) => ({ ...g, edges: addEdge({ ...c, id: newId('edge') }, g.edges) }));
      changed();
    },
    [changed],
  );
  const addNode = useCallback(
    (node: CanvasNode) => {
      setGraph((g) => ({ nodes: [...g.nodes.map((n) => ({ ...n, selected: false })), { ...node, selected: true }], edges: g.edges, rendererTypes: { ...g.rendererTypes, [node.id]: 'custom' } }));
      changed();
    },
    [changed],
  );
  const setNodeData = useCallback(
    (nodeId: string, data: Record<string, unknown>) => {
      setGraph((g) => ({ ...g, nodes: g.nodes.map((n) => (n.id === nodeId ? { ...n, data } : n)) }));
      changed();
    },
    [changed],
  );
  const removeEdge = useCallback(
    (edgeId: string) => {
      setGraph((g) => ({ ...g, edges: g.edges.filter((e) => e.id !== edgeId) }));
      changed();
    },
    [changed],
  );
  const removeSelected = useCallback(() => {
    setGraph((g) => {
      const gone = new Set(g.nodes.filter((n) => n.selected).map((n) => n.id));
      return { ...g, nodes: g.nodes.filter((n) => !gone.has(n.id)), edges: g.edges.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target)) };
    });
    changed();
  }, [changed]);

  /** PUT the graph as of `base`; a 412 (or 409) opens the merge prompt with the flow as it is now. */
  const putAt = useCallback(
    async (base: Flow) => {
      const sent = changes.current;
      const body = { name: base.name, description: base.description, ...definitionOf(graph) };
      try {
        const { flow: saved } = await call(api().PUT('/flows/{flowId}', { params: { path: { flowId: base.id } }, body, headers: { 'If-Match': `"${base.version}"` } }));
        setFlow(saved);
        setConflict(null);
        setGraph((g) => ({ ...g, rendererTypes: Object.fromEntries(saved.nodes.map((n) => [n.id, n.type])) }));
        if (changes.current === sent) setDirty(false);
      } catch (err) {
        if (err instanceof ConsoleError && (err.status === 412 || err.status === 409)) {
          setConflict(await getFlow(base.id));
          return;
        }
        throw err;
      }
    },
    [graph],
  );
  const save = useCallback(() => putAt(flow), [putAt, flow]);
  /** Merge prompt: keep mine, written over the version that is there now. */
  const overwrite = useCallback(async () => {
    const theirs = conflict ?? (await getFlow(flow.id));
    await putAt(theirs);
  }, [conflict, flow.id, putAt]);
  const reloadTheirs = useCallback(async () => replaceWith(await getFlow(flow.id)), [flow.id, replaceWith]);
  const restore = useCallback(async (version: number) => replaceWith(await restoreVersion(flow.id, version)), [flow.id, replaceWith]);

  /** Another write of this page (trigger settings, key) moved the version on: follow it if nobody else wrote first. */
  const advancedTo = useCallback((version: number | null, patch: Partial<Flow> = {}) => {
    setFlow((f) => ({ ...f, ...patch, version: version !== null && version === f.version + 1 ? version : f.version }));
  }, []);

  return { flow, graph, dirty, conflict, onNodesChange, onEdgesChange, onConnect, addNode, setNodeData, removeEdge, removeSelected, save, overwrite, reloadTheirs, restore, replaceWith, advancedTo };
}

export type FlowEditor = ReturnType<typeof useFlowEditor>;
