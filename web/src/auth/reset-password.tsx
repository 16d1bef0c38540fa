import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import './auth.css';

/**
 * The mailed link's page: a new password for the token in `?token=`. The answer carries no session
 * (the link proves the mailbox, not who holds this browser), so it goes on to sign in.
 */
export function ResetPasswordPage() {
  const [, navigate] = useLocation();
  const [token] = useState(() => new URLSearchParams(location.search).get('token') ?? '');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const reset = useAction(async () => {
    if (password !== again) throw new Error('The two passwords differ.');
    const answer = await call(api().POST('/auth/reset-password', { body: { token, password } }));
    // startedOver: the address belonged to an account that never verified it; a new one holds it now.
    navigate(answer.startedOver ? '/sign-in?reset=new' : '/sign-in?reset=1');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void reset.run();
  };
  return (
    <Page title="Set a new password">
      {token ? (
        <form className="card narrow auth-card" onSubmit={submit}>
          <Field label="New password" hint="At least 10 characters. Other sessions stop working.">
            <input type="password" autoComplete="new-password" required minLength={10} maxLength={200} value={password} onChange={(e) => setPassword(e.target.value)} />
          </Field>
          <Field label="New password again">
            <input type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
          </Field>
          <ErrorNote error={reset.error} />
          <button type="submit" disabled={reset.pending}>
            Set password
          </button>
        </form>
      ) : (
        <p className="error" role="alert">
          This link has no token. Open the whole link from the mail, or <Link href="/forgot-password">ask for a new one</Link>.
        </p>
      )}
    </Page>
  );
}
