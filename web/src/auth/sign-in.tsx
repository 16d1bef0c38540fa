import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { api, call, signIn } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';

export function SignInPage() {
  const [, navigate] = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useAction(async () => {
    const answer = await call(api().POST('/auth/login', { body: { email, password } }));
    signIn(answer.token);
    const next = new URLSearchParams(location.search).get('next');
    navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/flows');
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void login.run();
  };
  return (
    <Page title="Sign in">
      <form className="card narrow" onSubmit={submit}>
        <Field label="Email">
          <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password">
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={login.error} />
        <button type="submit" disabled={login.pending}>
          Sign in
        </button>
      </form>
    </Page>
  );
}
