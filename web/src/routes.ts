import type { ComponentType } from 'react';

/** One page of the console: its path (wouter syntax), its component, and whether it needs a session. */
export interface RouteEntry {
  path: string;
  component: ComponentType<{ params: Record<string, string | undefined> }>;
  /** Reachable signed out (sign in, register, the pages e-mailed links open, the device page's redirect target). */
  public?: boolean;
}

/** A link in the header's navigation. */
export interface NavEntry {
  href: string;
  label: string;
}
