import { Page } from '../ui';

export function FlowsPage() {
  return <Page title="Flows"><p>Coming next.</p></Page>;
}
