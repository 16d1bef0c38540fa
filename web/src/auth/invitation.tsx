import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call, signIn, useToken } from '../session';
import { ErrorNote, Page, useAction } from '../ui';
import { orgsChanged } from './org-events';
import './auth.css';

interface Joined {
  id: string;
  name: string;
  role: string;
}

/**
 * The invitation mail's page. Signed out, it offers signing in or registering and comes back
 * here; signed in, accepting joins the organization (the account must have the invited email).
 */
export function InvitationPage({ params }: { params: Record<string, string | undefined> }) {
  const invitation = params.token ?? '';
  const token = useToken();
  const [location, navigate] = useLocation();
  const [joined, setJoined] = useState<Joined | null>(null);
  const accept = useAction(async () => {
    const answer = await call(api().POST('/invitations/{token}/accept', { params: { path: { token: invitation } } }));
    setJoined({ id: answer.organization.id, name: answer.organization.name, role: answer.member.role });
    orgsChanged();
  });
  const switchTo = useAction(async (orgId: string) => {
    const answer = await call(api().POST('/orgs/switch', { body: { orgId } }));
    signIn(answer.token);
    navigate('/flows');
  });
  const back = `?next=${encodeURIComponent(location)}`;
  return (
    <Page title="Invitation">
      <div className="card narrow auth-card">
        {!token ? (
          <>
            <p>You were invited to join an organization. Sign in, or create an account, with the email address the invitation was sent to.</p>
            <div className="auth-actions">
              <Link className="button-like" href={`/sign-in${back}`}>
                Sign in to accept
              </Link>
              <Link href={`/register${back}`}>Create an account</Link>
            </div>
          </>
        ) : joined ? (
          <>
            <p className="notice" role="status">
              You joined <strong>{joined.name}</strong> as {joined.role}.
            </p>
            <ErrorNote error={switchTo.error} />
            <div className="auth-actions">
              <button type="button" disabled={switchTo.pending} onClick={() => void switchTo.run(joined.id)}>
                Switch to {joined.name}
              </button>
              <Link href="/flows">Stay where I am</Link>
            </div>
          </>
        ) : (
          <>
            <p>You were invited to join an organization. Accepting adds you as a member with the role the invitation gives.</p>
            <ErrorNote error={accept.error} />
            <button type="button" disabled={accept.pending} onClick={() => void accept.run()}>
              Accept invitation
            </button>
          </>
        )}
      </div>
    </Page>
  );
}
