import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call, signIn } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import { nextFromQuery, nextQuery } from './next';
import './auth.css';

/** A new account (personal workspace), signed in at once; the verification mail is on its way. */
export function RegisterPage() {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const register = useAction(async () => {
    const answer = await call(api().POST('/auth/register', { body: { name, email, password } }));
    signIn(answer.token);
    navigate(nextFromQuery());
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void register.run();
  };
  return (
    <Page title="Create an account">
      <form className="card narrow auth-card" onSubmit={submit}>
        <Field label="Name">
          <input autoComplete="name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="Email" hint="We mail a link to verify it.">
          <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <Field label="Password" hint="At least 10 characters.">
          <input type="password" autoComplete="new-password" required minLength={10} maxLength={200} value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={register.error} />
        <button type="submit" disabled={register.pending}>
          Create account
        </button>
        <p className="auth-alt">
          Already have an account? <Link href={`/sign-in${nextQuery()}`}>Sign in</Link>
        </p>
      </form>
    </Page>
  );
}
