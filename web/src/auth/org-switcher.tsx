import { useEffect, useId } from 'react';
import { api, call, signIn, useToken } from '../session';
import { ErrorNote, useAction, useLoad } from '../ui';
import { onOrgsChanged } from './org-events';
import './auth.css';

const PERSONAL = '';

/**
 * What the switcher shows: the active scope, the organizations, and the active one's workspaces.
 * One page of each (100, the API's most); the active ones are added when they fall beyond it.
 */
async function loadScope() {
  const [active, orgs] = await Promise.all([call(api().GET('/orgs/active')), call(api().GET('/orgs', { params: { query: { limit: 100 } } }))]);
  const org = active.organization;
  const workspaces = org
    ? (await call(api().GET('/orgs/{orgId}/workspaces', { params: { path: { orgId: org.id }, query: { limit: 100 } } }))).items
    : [];
  if (org && !orgs.items.some((o) => o.id === org.id)) orgs.items.push(org);
  if (active.workspace && !workspaces.some((w) => w.id === active.workspace!.id)) workspaces.push(active.workspace);
  return { orgId: org?.id ?? PERSONAL, workspaceId: active.workspace?.id ?? '', orgs: orgs.items, workspaces };
}

/**
 * The header's organization and workspace pickers. The scope lives in the token, so a switch
 * answers a new token that replaces the session's. It loads on mount, after a switch (the token
 * changes) and when an invitation is accepted, never on a timer.
 */
export function OrgSwitcher() {
  const token = useToken();
  const scope = useLoad(loadScope, [token]);
  const { reload } = scope;
  useEffect(() => onOrgsChanged(reload), [reload]);
  const orgSelect = useId();
  const workspaceSelect = useId();
  const switchOrg = useAction(async (orgId: string) => {
    const answer = await call(api().POST('/orgs/switch', { body: { orgId: orgId === PERSONAL ? null : orgId } }));
    if (answer.token) signIn(answer.token);
  });
  const switchWorkspace = useAction(async (workspaceId: string) => {
    const answer = await call(api().POST('/workspaces/switch', { body: { workspaceId } }));
    if (answer.token) signIn(answer.token);
  });
  const data = scope.data;
  const busy = scope.loading || switchOrg.pending || switchWorkspace.pending;
  if (!data) return scope.error ? <span className="org-switcher-error muted">Organizations unavailable</span> : null;
  return (
    <div className="org-switcher" role="group" aria-label="Where you work">
      <div className="org-switcher-field">
        <label className="org-switcher-label" htmlFor={orgSelect}>
          Organization
        </label>
        <select id={orgSelect} value={data.orgId} disabled={busy} onChange={(e) => void switchOrg.run(e.target.value)}>
          <option value={PERSONAL}>Personal</option>
          {data.orgs.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      </div>
      {data.orgId !== PERSONAL ? (
        <div className="org-switcher-field">
          <label className="org-switcher-label" htmlFor={workspaceSelect}>
            Workspace
          </label>
          <select id={workspaceSelect} value={data.workspaceId} disabled={busy} onChange={(e) => void switchWorkspace.run(e.target.value)}>
            {data.workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <ErrorNote error={switchOrg.error ?? switchWorkspace.error} />
    </div>
  );
}
