/**
 * Where to go after signing in: `?next=` when it is a path on this console (never another origin,
 * so a crafted link cannot send a fresh session elsewhere), else the flows.
 */
export function safeNext(raw: string | null | undefined, fallback = '/flows'): string {
  return raw && raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/\\') ? raw : fallback;
}

/** `?next=` of the current address, checked. */
export function nextFromQuery(fallback = '/flows'): string {
  return safeNext(new URLSearchParams(location.search).get('next'), fallback);
}

/** `?next=…` to carry the current target on to another auth page ('' when there is none). */
export function nextQuery(): string {
  const next = new URLSearchParams(location.search).get('next');
  return next ? `?next=${encodeURIComponent(safeNext(next))}` : '';
}

/**
 * A social sign-in leaves the console for the provider and comes back to /auth/callback, which
 * cannot carry `?next=`: the target waits in sessionStorage (this tab only) meanwhile.
 */
const SOCIAL_NEXT_KEY = 'flows.console.socialNext';

export function rememberSocialNext(): void {
  sessionStorage.setItem(SOCIAL_NEXT_KEY, nextFromQuery());
}

export function takeSocialNext(): string {
  const next = sessionStorage.getItem(SOCIAL_NEXT_KEY);
  sessionStorage.removeItem(SOCIAL_NEXT_KEY);
  return safeNext(next);
}
