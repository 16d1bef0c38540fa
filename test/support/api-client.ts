import { createFlowClient, type FlowClient } from '../../client/index.js';
import { checkResponse } from './http.js';

/**
 * The generated typed client (`client/`) for API tests: paths, parameters and bodies are checked
 * against the OpenAPI document at compile time, and every answer is validated against it at run
 * time like `call()`'s. `headers` are a user's auth headers (`user.auth`) or anything else.
 */
export function apiClient(baseUrl: string, headers: Record<string, string> = {}): FlowClient {
  return createFlowClient({ baseUrl, headers, fetch: validatingFetch });
}

async function validatingFetch(request: Request): Promise<Response> {
  const res = await fetch(request);
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  checkResponse(request.method, request.url, res.status, res.headers.get('content-type'), text, json);
  const headers = new Headers(res.headers);
  headers.delete('content-encoding');
  return new Response(text === '' || res.status === 204 || res.status === 304 ? null : text, { status: res.status, statusText: res.statusText, headers });
}

/**
 * A typed call's answer shaped like `call()`'s (status, headers, body, text) so assertions read the
 * same, plus `data` typed by the document's success response and `error` by its error response.
 */
export async function answer<T, E>(pending: Promise<{ data?: T; error?: E; response: Response }>) {
  const { data, error, response } = await pending;
  const body: any = data ?? error;
  return { status: response.status, headers: response.headers, body, text: body === undefined ? '' : JSON.stringify(body), data, error };
}
