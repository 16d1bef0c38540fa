import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { agentsNav, agentsRoutes } from './agents/index';
import { authRoutes } from './auth/index';
import { OrgSwitcher } from './auth/org-switcher';
import { flowsNav, flowsRoutes } from './flows/index';
import type { RouteEntry } from './routes';
import { runsNav, runsRoutes } from './runs/index';
import { signOut, useToken } from './session';
import { Page } from './ui';
import { workflowsNav, workflowsRoutes } from './workflows/index';

const ROUTES: RouteEntry[] = [...authRoutes, ...flowsRoutes, ...runsRoutes, ...workflowsRoutes, ...agentsRoutes];
const NAV = [...flowsNav, ...runsNav, ...workflowsNav, ...agentsNav];

export function App() {
  const token = useToken();
  const [location] = useLocation();
  const signInTarget = `/sign-in?next=${encodeURIComponent(location + window.location.search)}`;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Flows
        </Link>
        {token ? (
          <nav aria-label="Main">
            <ul>
              {NAV.map((n) => (
                <li key={n.href}>
                  <Link href={n.href} className={(active) => (active ? 'active' : '')} aria-current={location.startsWith(n.href) ? 'page' : undefined}>
                    {n.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        ) : null}
        <div className="top-right">
          {token ? (
            <>
              <OrgSwitcher />
              <button type="button" className="link" onClick={signOut}>
                Sign out
              </button>
            </>
          ) : (
            <Link href="/sign-in">Sign in</Link>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {/* Keyed by the token: switching organization or workspace changes it, and every page then loads its scope again. */}
        <Switch key={token ?? 'signed-out'}>
          {ROUTES.map((r) => (
            <Route key={r.path} path={r.path}>
              {(params) => (r.public || token ? <r.component params={params} /> : <Redirect to={signInTarget} />)}
            </Route>
          ))}
          <Route path="/">{token ? <Redirect to="/flows" /> : <Redirect to="/sign-in" />}</Route>
          <Route>
            <Page title="Not found">
              <p>
                There is no page at <code>{location}</code>. <Link href="/">Go to the start</Link>.
              </p>
            </Page>
          </Route>
        </Switch>
      </main>
    </>
  );
}
