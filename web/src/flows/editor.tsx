import { applyNodeChanges, useReactFlow, type NodeChange } from '@xyflow/react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'wouter';
import { ErrorNote, Page, useAction } from '../ui';
import { versionBeforeLastEdit, type Flow, type NodeTypeInfo } from './api';
import { Canvas } from './canvas';
import { ConflictPrompt } from './conflict';
import { useFlowEditor } from './editor-state';
import { ConnectionsForm } from './connections-form';
import { commonKeys, graphOf, initialData, labelOf, newId, type CanvasNode, type Graph } from './model';
import { NodeRunDetails } from './node-run';
import { Palette } from './palette';
import { RunPanel } from './run-panel';
import { NodeLabelsContext, RunNodesContext, type RunNodes } from './run-state';
import { SaveProblems } from './save-problems';
import { SettingsForm } from './settings-form';
import { TimeTravelBar, useTimeTravel } from './time-travel';
import { TriggerPanel } from './trigger-panel';

/** The canvas page: palette, canvas, the selected node's settings and run, time travel, run, trigger. */
export function FlowEditorView({ initial, types, me }: { initial: Flow; types: NodeTypeInfo[]; me: string | null }) {
  const editor = useFlowEditor(initial);
  const { flow, graph, dirty } = editor;
  const travel = useTimeTravel(flow.id, flow.version);
  const readOnly = travel.at !== null;
  const [past, setPast] = useState<Graph | null>(null);
  useEffect(() => setPast(travel.past ? graphOf(travel.past) : null), [travel.past]);
  const [runNodes, setRunNodes] = useState<RunNodes>({});
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const typeMap = useMemo(() => new Map(types.map((t) => [t.nodeType, t])), [types]);
  const labels = useMemo(() => new Map(types.map((t) => [t.nodeType, t.label])), [types]);
  const common = useMemo(() => commonKeys(types), [types]);
  const { screenToFlowPosition } = useReactFlow();
  const paneRef = useRef<HTMLDivElement>(null);
  const sideRef = useRef<HTMLElement>(null);
  // Another node's settings start at their top, wherever the previous node's were scrolled to.
  useEffect(() => {
    if (sideRef.current) sideRef.current.scrollTop = 0;
  }, [selectedId]);
  // Fitting the view to an empty flow would jump to the first node dropped: only a flow opened with nodes is fitted.
  const [fitOnOpen] = useState(initial.nodes.length > 0);

  const shown = readOnly ? (past ?? { nodes: [], edges: [], rendererTypes: {} }) : graph;
  const selected = shown.nodes.find((n) => n.id === selectedId) ?? null;

  const addAt = useCallback(
    (nodeType: string, position: { x: number; y: number }) => {
      const type = typeMap.get(nodeType);
      if (!type) return;
      const id = newId(nodeType);
      editor.addNode({ id, type: 'flow', position, data: initialData(type, graph.nodes.length) } satisfies CanvasNode);
      setSelectedId(id);
    },
    [editor, typeMap, graph.nodes.length],
  );
  /** Keyboard (or tap) on a palette item: the node lands in view, below the last one added. */
  const addCentred = useCallback(
    (nodeType: string) => {
      const box = paneRef.current?.getBoundingClientRect();
      if (!box) return;
      // Four to a column, columns side by side: nodes added this way do not cover each other.
      const n = graph.nodes.length;
      const x = box.left + Math.max(20, box.width / 2 - 280) + (Math.floor(n / 4) % 3) * 200;
      const y = box.top + 40 + (n % 4) * 110;
      addAt(nodeType, screenToFlowPosition({ x, y }));
    },
    [addAt, graph.nodes.length, screenToFlowPosition],
  );
  /** Selects one node on the canvas (from a save problem) so its settings open. */
  const selectNode = useCallback(
    (nodeId: string) => {
      editor.onNodesChange(graph.nodes.map((n) => ({ type: 'select' as const, id: n.id, selected: n.id === nodeId })));
      setSelectedId(nodeId);
    },
    [editor, graph.nodes],
  );
  const onPastChange = useCallback((changes: NodeChange<CanvasNode>[]) => {
    // A past version only shows: selecting and measuring apply, nothing else does.
    const allowed = changes.filter((c) => c.type === 'select' || c.type === 'dimensions');
    setPast((p) => (p ? { ...p, nodes: applyNodeChanges(allowed, p.nodes) } : p));
  }, []);

  const save = useAction(editor.save);
  const undo = useAction(useCallback(async () => editor.restore(await versionBeforeLastEdit(flow.id, flow.version)), [editor, flow.id, flow.version]));
  // Leaving with unsaved changes asks first (the browser's own prompt).
  useEffect(() => {
    if (!dirty) return;
    const onLeave = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', onLeave);
    return () => window.removeEventListener('beforeunload', onLeave);
  }, [dirty]);
  const restore = useAction(
    useCallback(
      async (version: number) => {
        await editor.restore(version);
        travel.goTo(null);
      },
      [editor, travel],
    ),
  );
  const anySelected = !readOnly && (graph.nodes.some((n) => n.selected) || graph.edges.some((e) => e.selected));

  return (
    <Page
      title={flow.name}
      actions={
        <>
          <span className={`flows-save-state${dirty ? ' dirty' : ''}`} role="status">
            {dirty ? 'Unsaved changes' : `Saved · version ${flow.version}`}
          </span>
          <button type="button" onClick={() => void save.run()} disabled={!dirty || save.pending || readOnly}>
            Save
          </button>
          <button type="button" className="secondary" onClick={() => void undo.run()} disabled={dirty || readOnly || flow.version === 0 || undo.pending} title="Restore the version before the last change">
            Undo
          </button>
          {dirty ? (
            <button type="button" className="secondary" onClick={() => editor.replaceWith(flow)}>
              Discard changes
            </button>
          ) : null}
          <button type="button" className="danger" onClick={editor.removeSelected} disabled={!anySelected}>
            Delete selected
          </button>
        </>
      }
    >
      <p className="flows-back">
        <Link href="/flows">← All flows</Link>
      </p>
      {save.error ? <SaveProblems error={save.error} nodes={graph.nodes} nameOf={(n) => labelOf(n, typeMap)} onSelect={selectNode} /> : null}
      <ErrorNote error={undo.error ?? restore.error} />
      {editor.conflict ? <ConflictPrompt theirs={editor.conflict} onReload={editor.reloadTheirs} onOverwrite={editor.overwrite} /> : null}
      <RunNodesContext.Provider value={runNodes}>
        <NodeLabelsContext.Provider value={labels}>
          <div className="flows-editor">
            <Palette types={types} disabled={readOnly} onAdd={addCentred} />
            <div className="flows-pane" ref={paneRef}>
              <Canvas
                nodes={shown.nodes}
                edges={shown.edges}
                readOnly={readOnly}
                fitOnOpen={fitOnOpen}
                onNodesChange={readOnly ? onPastChange : editor.onNodesChange}
                onEdgesChange={editor.onEdgesChange}
                onConnect={editor.onConnect}
                onDropType={addAt}
                onSelect={setSelectedId}
              />
            </div>
            <aside className="flows-side" aria-label="Selected node" ref={sideRef}>
              {selected ? (
                <>
                  <SettingsForm node={selected} type={typeMap.get(String(selected.data.nodeType))} common={common} readOnly={readOnly} onChange={editor.setNodeData} />
                  <ConnectionsForm
                    node={selected}
                    nodes={shown.nodes}
                    edges={shown.edges}
                    readOnly={readOnly}
                    nameOf={(n) => labelOf(n, typeMap)}
                    onConnect={(source, target) => editor.onConnect({ source, target, sourceHandle: null, targetHandle: null })}
                    onRemove={editor.removeEdge}
                  />
                  <NodeRunDetails run={runNodes[selected.id]} />
                </>
              ) : (
                <p className="muted">Select a node to see its settings and its last run. Connect nodes by dragging from a node's bottom handle to another's top handle.</p>
              )}
            </aside>
          </div>
        </NodeLabelsContext.Provider>
      </RunNodesContext.Provider>
      <TimeTravelBar me={me} travel={travel} current={flow.version} dirty={dirty} onRestore={(v) => void restore.run(v)} />
      <div className="flows-panels">
        <RunPanel flowId={flow.id} dirty={dirty} onNodes={setRunNodes} />
        <TriggerPanel flowId={flow.id} trigger={flow.trigger} onWritten={(version, trigger) => editor.advancedTo(version, { trigger })} />
      </div>
    </Page>
  );
}
