import { ReactFlowProvider } from '@xyflow/react';
import { Link } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Page, useLoad } from '../ui';
import { getFlow, listNodeTypes } from './api';
import { FlowEditorView } from './editor';
import './flows.css';

/** `/flows/:flowId`: the flow and the node types, then the editor. */
export function FlowCanvasPage({ params }: { params: Record<string, string | undefined> }) {
  const flowId = params.flowId ?? '';
  const loaded = useLoad(async () => {
    const [flow, types, me] = await Promise.all([getFlow(flowId), listNodeTypes(), call(api().GET('/users/me')).then((b) => b.user.id, () => null)]);
    return { flow, types, me };
  }, [flowId]);
  if (!loaded.data) {
    return (
      <Page title="Flow">
        {loaded.error ? <ErrorNote error={loaded.error} /> : <p className="muted">Loading…</p>}
        <p>
          <Link href="/flows">Back to the flows</Link>
        </p>
      </Page>
    );
  }
  return (
    <ReactFlowProvider>
      <FlowEditorView key={loaded.data.flow.id} initial={loaded.data.flow} types={loaded.data.types} me={loaded.data.me} />
    </ReactFlowProvider>
  );
}
