import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call, signIn } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import { nextFromQuery, nextQuery, rememberSocialNext } from './next';
import './auth.css';

export function SignInPage() {
  const [, navigate] = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const reset = new URLSearchParams(location.search).get('reset');
  const login = useAction(async () => {
    const answer = await call(api().POST('/auth/login', { body: { email, password } }));
    signIn(answer.token);
    navigate(nextFromQuery());
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void login.run();
  };
  return (
    <Page title="Sign in">
      <form className="card narrow auth-card" onSubmit={submit}>
        {reset ? (
          <p className="notice" role="status">
            {reset === 'new'
              ? 'Your password is set. The address had an account that was never verified: a new, verified account holds it now. Sign in with the new password.'
              : 'Your password was changed. Sign in with the new one.'}
          </p>
        ) : null}
        <Field label="Email">
          <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={login.error} />
        <div className="auth-actions">
          <button type="submit" disabled={login.pending}>
            Sign in
          </button>
          <Link href="/forgot-password">Forgot password?</Link>
        </div>
        <p className="auth-alt">
          No account yet? <Link href={`/register${nextQuery()}`}>Create an account</Link>
        </p>
        <div className="auth-social" aria-label="Other ways to sign in" role="group">
          {/* Plain links: the API answers 302 to the provider (or an error when it is not configured). */}
          <a className="button-like" href="/api/auth/google" onClick={rememberSocialNext}>
            Sign in with Google
          </a>
          <a className="button-like" href="/api/auth/github" onClick={rememberSocialNext}>
            Sign in with GitHub
          </a>
        </div>
      </form>
    </Page>
  );
}
