import type { ComponentType } from 'react';
import { useToken } from '../session';

type PageComponent = ComponentType<{ params: Record<string, string | undefined> }>;

/**
 * The page mounted afresh when the token changes (sign in as someone else, organization switch):
 * every list, live stream and form then belongs to the new session, none shows the old tenant's data.
 */
export function perSession(Page: PageComponent): PageComponent {
  function PerSession(props: { params: Record<string, string | undefined> }) {
    const token = useToken();
    return <Page key={token ?? ''} {...props} />;
  }
  PerSession.displayName = `perSession(${Page.displayName ?? Page.name})`;
  return PerSession;
}
