import { Page } from '../ui';

export function WorkflowsPage() {
  return <Page title="Workflows"><p>Coming next.</p></Page>;
}
