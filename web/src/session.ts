import { useSyncExternalStore } from 'react';
import { createFlowClient, type FlowClient } from '../../client/index';

/**
 * The signed-in session: the bearer token in localStorage (the API takes bearer tokens, not
 * cookies), and the typed client built on it. Every page talks to the API through `api()`.
 */
const TOKEN_KEY = 'flows.console.token';
const listeners = new Set<() => void>();
let client: FlowClient | null = null;

export function token(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

export function signIn(newToken: string): void {
  localStorage.setItem(TOKEN_KEY, newToken);
  changed();
}

export function signOut(): void {
  localStorage.removeItem(TOKEN_KEY);
  changed();
}

function changed(): void {
  client = null;
  for (const listener of listeners) listener();
}

/** The typed client for the current token (anonymous when signed out). */
export function api(): FlowClient {
  return (client ??= createFlowClient({ baseUrl: `${location.origin}/api`, token: token() }));
}

/** Re-renders when the token changes (sign in, sign out, organization switch). */
export function useToken(): string | null {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      const onStorage = (e: StorageEvent) => e.key === TOKEN_KEY && changed();
      window.addEventListener('storage', onStorage);
      return () => {
        listeners.delete(listener);
        window.removeEventListener('storage', onStorage);
      };
    },
    token,
  );
}

/** The API's error body: `{ success: false, error: { code, message, details } }`. */
export interface ApiError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** The error of an openapi-fetch answer as one line a person can read, with its stable code. */
export function errorOf(error: unknown, response?: Response): ApiError {
  const body = error as { error?: ApiError } | undefined;
  if (body?.error?.code) return body.error;
  return { code: response ? `HTTP_${response.status}` : 'NETWORK_ERROR', message: response ? response.statusText || 'request failed' : String(error) };
}

/** Unwraps an openapi-fetch answer: its data, or throws an Error carrying the API's code. */
export async function call<T>(promise: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await promise;
  if (error !== undefined || !response.ok) throw new ConsoleError(errorOf(error, response), response.status);
  return data as T;
}

export class ConsoleError extends Error {
  constructor(
    readonly apiError: ApiError,
    readonly status: number,
  ) {
    super(`${apiError.message} (${apiError.code})`);
  }
}
