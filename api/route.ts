import type { Context } from 'koa';
import type { z } from 'zod';
import type { CommandContext } from '../commands/handle.js';
import type { Services } from '../ports/services.js';
import type { Principal } from '../domain/shared/principal.js';
import type { RequiredPermission } from '../domain/shared/permissions.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type AuthKind = 'none' | 'bearer' | 'trigger-key';

export interface RouteInput<P, Q, B> {
  /** Set on `bearer` routes (the authenticator ran before validation); null on public routes. */
  principal: Principal | null;
  params: P;
  query: Q;
  body: B;
  koa: Context;
  services: Services;
  /** Metadata for the commands this request issues. */
  command: CommandContext;
  /** Read-your-writes: wait until the projections serving `streamId` reached `position`. */
  settle(position: number | null, streamId: string): Promise<void>;
}

export interface RouteReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

type AnyZod = z.ZodType;

/** Turns an error (already mapped to its status and our code) into another wire format's body. */
export type ErrorRenderer = (status: number, error: { code: string; message: string; details?: unknown }) => unknown;

/** One entry of the route table: it registers the Koa route, validates input and documents the operation. */
export interface RouteDef<P extends AnyZod = AnyZod, Q extends AnyZod = AnyZod, B extends AnyZod = AnyZod> {
  method: HttpMethod;
  /** OpenAPI style, relative to /api: `/probes/{probeId}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: AuthKind;
  /** Checked in the path's organization when the path has `{orgId}`, else in the active one. */
  permission?: RequiredPermission;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A multipart/form-data body (api/multipart.ts): not parsed by the pipeline (the handler streams
   * `koa.req` through `parseMultipart`); this schema only documents the parts (`z.file()` for files).
   */
  multipart?: AnyZod;
  responses: Record<number, { description: string; schema?: AnyZod }>;
  /**
   * Error statuses this route can answer beyond those declared in `responses` and those the pipeline
   * gives it (401 when authenticated, 403 with a permission, 404 with path parameters, 400 with
   * input, 413/415 with a body: see `statusesOf` in openapi.ts); documented with the error body.
   */
  errors?: number[];
  /**
   * The statuses the seed's contract specifies for this operation; any other status it documents is
   * marked `x-beyond-seed` (answers the service adds, e.g. 403 for a missing permission).
   */
  seedStatuses?: number[];
  /** Also take the bearer credential from this header when there is no Authorization (`x-api-key` for Anthropic-style clients). */
  credentialHeader?: string;
  /**
   * The error body this path answers with instead of ours (any method on the path, body parse errors
   * included): for routes that speak another API's wire format, whose clients parse its errors.
   */
  renderError?: ErrorRenderer;
  /** The schema of the bodies `renderError` produces: documented for each error status the route does not describe in `responses`. */
  errorSchema?: AnyZod;
  /**
   * A body limit of its own when the route takes more than BODY_LIMIT_BYTES (e.g. a page's HTML);
   * applies to exact paths (no path parameters), counted after decompression like the global one.
   */
  bodyLimitBytes?(config: Services['config']): number;
  handler(input: RouteInput<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<RouteReply>;
}

/** Keeps the generic parameters of each route while the table holds them as one type. */
export function defineRoute<P extends AnyZod, Q extends AnyZod, B extends AnyZod>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}
