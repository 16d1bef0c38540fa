import { useState, type FormEvent } from 'react';
import { api, call } from '../session';
import { ErrorNote, Field, Page, useAction } from '../ui';
import './auth.css';

type Decision = 'approve' | 'deny';

/**
 * CLI device login (RFC 8628): `flowctl login` shows a code and this page's address; the signed-in
 * person checks the code matches their terminal, then approves (the CLI gets a token for them at
 * its next poll) or denies. Needs a session: the app's redirect to sign-in keeps `?user_code=`.
 */
export function DevicePage() {
  const [code, setCode] = useState(() => new URLSearchParams(location.search).get('user_code') ?? '');
  const [outcome, setOutcome] = useState<{ status: 'approved' | 'denied'; clientName: string | null } | null>(null);
  const decide = useAction(async (decision: Decision) => {
    const path = decision === 'approve' ? '/cli/device/approve' : '/cli/device/deny';
    const answer = await call(api().POST(path, { body: { user_code: code.trim() } }));
    setOutcome({ status: answer.status, clientName: answer.clientName });
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Enter in the field approves: the same as the first button.
    void decide.run('approve');
  };
  const client = outcome?.clientName ? `“${outcome.clientName}”` : 'The CLI';
  return (
    <Page title="Sign in the CLI">
      <div className="card narrow auth-card">
        {outcome ? (
          <>
            <p className={outcome.status === 'approved' ? 'notice' : 'error'} role="status">
              {outcome.status === 'approved' ? (
                <>
                  Approved. {client} is signed in as you: return to your terminal.
                </>
              ) : (
                <>Denied. {client} was not signed in.</>
              )}
            </p>
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setOutcome(null);
                setCode('');
              }}
            >
              Enter another code
            </button>
          </>
        ) : (
          <form onSubmit={submit}>
            <p>Check that this code is the one your terminal shows. Approve only a login you started yourself.</p>
            <Field label="Code" hint="8 letters, as XXXX-XXXX (case and dashes do not matter).">
              <input
                className="device-code"
                required
                autoComplete="off"
                autoCapitalize="characters"
                spellCheck={false}
                maxLength={32}
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            </Field>
            <ErrorNote error={decide.error} />
            <div className="auth-actions">
              <button type="submit" disabled={decide.pending}>
                Approve
              </button>
              <button type="button" className="danger" disabled={decide.pending} onClick={() => void decide.run('deny')}>
                Deny
              </button>
            </div>
          </form>
        )}
      </div>
    </Page>
  );
}
