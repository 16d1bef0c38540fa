import { useEffect, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { ConsoleError, signIn } from '../session';
import { ErrorNote, Page } from '../ui';
import { takeSocialNext } from './next';
import './auth.css';

const PROVIDERS: Record<string, string> = { google: 'Google', github: 'GitHub' };

/**
 * Where a social sign-in lands: the outcome is in the fragment (never sent to a server):
 * `#token=…&expiresIn=…&provider=…&new=…` or `#error=CODE&provider=…&message=…`.
 */
export function AuthCallbackPage() {
  const [, navigate] = useLocation();
  const [fragment, setFragment] = useState(() => new URLSearchParams(location.hash.replace(/^#/, '')));
  const token = fragment.get('token');
  const provider = PROVIDERS[fragment.get('provider') ?? ''] ?? fragment.get('provider') ?? 'the provider';
  useEffect(() => {
    // A landing on the page already open changes only the fragment: no new page load.
    const onHash = () => location.hash && setFragment(new URLSearchParams(location.hash.replace(/^#/, '')));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    // The token must not stay in the address bar nor in history.
    if (location.hash) history.replaceState(null, '', location.pathname);
    if (token) {
      signIn(token);
      navigate(takeSocialNext(), { replace: true });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [fragment]);
  if (token)
    return (
      <Page title="Signing in">
        <p role="status">Signed in with {provider}…</p>
      </Page>
    );
  const code = fragment.get('error') ?? 'SIGN_IN_FAILED';
  const error = new ConsoleError({ code, message: fragment.get('message') ?? `Signing in with ${provider} did not work.` }, 0);
  return (
    <Page title={`Sign in with ${provider}`}>
      <div className="card narrow auth-card">
        <ErrorNote error={error} />
        {code === 'ACCOUNT_EMAIL_UNVERIFIED' ? (
          <p>
            An account already has this email but has not verified it, so {provider} was not linked to it. Sign in with its password, verify the email from the mail we sent,
            then sign in with {provider} again.
          </p>
        ) : null}
        <p className="auth-alt">
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </div>
    </Page>
  );
}
