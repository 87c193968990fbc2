import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { AppContext } from '../app-context.js';
import type { Principal, Scope } from '../auth/scopes.js';

/**
 * Who may call a route: `public` needs no key; `authenticated` any valid key; a scope (or list of
 * scopes, all required) names what the key must hold. Routes whose needs depend on the request
 * (snapshot) use `authenticated` and call `requireScope` themselves.
 */
export type Access = 'public' | 'authenticated' | Scope | Scope[];

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RequestContext<Q, P, B> {
  app: AppContext;
  query: Q;
  params: P;
  body: B;
  principal: Principal | null;
  requestId: string;
  req: Request;
  res: Response;
  requireScope(scope: Scope): void;
  /**
   * Present when a route that streams its body got an Idempotency-Key: once the handler has read
   * the body, `settle(digest of what it read)` returns the first answer to replay (return it), or
   * throws idempotency_conflict, or returns null for a new request, whose answer is then recorded.
   */
  idempotency?: { settle(bodyDigest: string): JsonResult | null };
}

export interface JsonResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A handler that wrote the response itself (event stream, CSV download). */
export const HANDLED = Symbol('handled');

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /** Response headers worth documenting, by name: their description. */
  headers?: Record<string, string>;
}

export interface RouteDef<
  Q extends z.ZodType = z.ZodType,
  P extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** OpenAPI-style template, e.g. /v1/nutrition/meals/{id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  query?: Q;
  params?: P;
  body?: B;
  /** Body size limit when larger than the 64 KiB default (import of a full export). */
  maxBodyBytes?: number;
  /** The handler reads the request body itself, as a stream (multipart file uploads). */
  streamsBody?: boolean;
  /** Request body media type for the OpenAPI document when it is not JSON. */
  bodyDoc?: { contentType: string; schema: Record<string, unknown> };
  responses: Record<number, ResponseDoc>;
  /** Request headers the route reads (beyond Authorization and Idempotency-Key), for the OpenAPI document. */
  requestHeaders?: Array<{ name: string; description: string }>;
  /**
   * The entity tag of a successful answer, from its JSON text: sent as its ETag header, also when
   * an Idempotency-Key replays a stored answer (which keeps only the body).
   */
  etag?: (json: string) => string;
  /**
   * A handler that awaits anything must be declared `async`: under an Idempotency-Key a plain
   * (synchronous) handler runs inside the transaction that also records its response, and a
   * transaction cannot span an await (see pipeline.ts runHandler).
   */
  handler(
    ctx: RequestContext<z.output<Q>, z.output<P>, z.output<B>>,
  ): JsonResult | typeof HANDLED | Promise<JsonResult | typeof HANDLED>;
}

/** Identity function that infers a route's types from its schemas. */
export function defineRoute<Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType>(
  route: RouteDef<Q, P, B>,
): RouteDef {
  return route as unknown as RouteDef;
}
