import { Page } from '../ui';

export function AgentsPage() {
  return <Page title="Agents"><p>Coming next.</p></Page>;
}
