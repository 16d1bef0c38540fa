import { Page } from '../ui';

export function RunsPage() {
  return <Page title="Runs"><p>Coming next.</p></Page>;
}
