import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, call } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import './auth.css';

/** Asks for a reset link. The answer is the same whether or not the account exists (no probing). */
export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const ask = useAction(async () => {
    await call(api().POST('/auth/forgot-password', { body: { email } }));
    setSent(true);
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void ask.run();
  };
  return (
    <Page title="Forgot password">
      <form className="card narrow auth-card" onSubmit={submit}>
        {sent ? (
          <p className="notice" role="status">
            If an account exists for {email}, a link to reset its password was sent. It works once, for a limited time.
          </p>
        ) : (
          <>
            <Field label="Email">
              <input type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
            </Field>
            <ErrorNote error={ask.error} />
            <button type="submit" disabled={ask.pending}>
              Send reset link
            </button>
          </>
        )}
        <p className="auth-alt">
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </form>
    </Page>
  );
}
