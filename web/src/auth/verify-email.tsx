import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, call, ConsoleError, signIn } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import './auth.css';

type Outcome = { kind: 'verified'; email: string } | { kind: 'startedOver'; email: string } | { kind: 'needsPassword'; startOver: boolean };

/**
 * The verification mail's page: posts `?token=` at once. An account with a password must also
 * give it (so a link clicked by someone else cannot verify a hijacker's account); when the account
 * never proved an address, the clicker may instead start over and take the address.
 */
export function VerifyEmailPage() {
  const [token] = useState(() => new URLSearchParams(location.search).get('token') ?? '');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  const [startingOver, setStartingOver] = useState(false);
  const verify = useAction(async (body: { token: string; password?: string; startOver?: { name: string; password: string } }) => {
    try {
      const answer = await call(api().POST('/auth/verify-email', { body }));
      if ('token' in answer && answer.token) {
        signIn(answer.token);
        setOutcome({ kind: 'startedOver', email: answer.email });
      } else setOutcome({ kind: 'verified', email: answer.email });
    } catch (err) {
      if (err instanceof ConsoleError && err.apiError.code === 'PASSWORD_REQUIRED') {
        setOutcome({ kind: 'needsPassword', startOver: err.apiError.details?.startOver === true });
        // The first try is sent without a password on purpose: say nothing about it.
        if (body.password === undefined && body.startOver === undefined) return;
      }
      throw err;
    }
  });
  // Once per page, even when React runs effects twice.
  const sent = useRef(false);
  useEffect(() => {
    if (!token || sent.current) return;
    sent.current = true;
    void verify.run({ token });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void verify.run(startingOver ? { token, startOver: { name, password } } : { token, password });
  };

  if (!token)
    return (
      <Page title="Verify your email">
        <p className="error" role="alert">
          This link has no token. Open the whole link from the mail.
        </p>
      </Page>
    );
  return (
    <Page title="Verify your email">
      <div className="card narrow auth-card">
        {outcome?.kind === 'verified' ? (
          <p className="notice" role="status">
            {outcome.email} is verified. <Link href="/flows">Go to the console</Link>.
          </p>
        ) : outcome?.kind === 'startedOver' ? (
          <p className="notice" role="status">
            A new account now holds {outcome.email}, verified, and you are signed in to it. <Link href="/flows">Go to the console</Link>.
          </p>
        ) : outcome?.kind === 'needsPassword' ? (
          <form onSubmit={submit}>
            <p>{startingOver ? 'Set up a new account for this address.' : "Enter this account's password to verify the address."}</p>
            {startingOver ? (
              <Field label="Name">
                <input autoComplete="name" required value={name} onChange={(e) => setName(e.target.value)} />
              </Field>
            ) : null}
            <Field label={startingOver ? 'New password' : 'Password'}>
              <input type="password" autoComplete={startingOver ? 'new-password' : 'current-password'} required value={password} onChange={(e) => setPassword(e.target.value)} />
            </Field>
            <ErrorNote error={verify.error} />
            <div className="auth-actions">
              <button type="submit" disabled={verify.pending}>
                {startingOver ? 'Start over' : 'Verify'}
              </button>
              {outcome.startOver ? (
                <button type="button" className="link" onClick={() => setStartingOver((s) => !s)}>
                  {startingOver ? 'I have the password' : 'I never set up this account'}
                </button>
              ) : null}
            </div>
          </form>
        ) : verify.pending ? (
          <p role="status">Verifying…</p>
        ) : (
          <ErrorNote error={verify.error} />
        )}
      </div>
    </Page>
  );
}
