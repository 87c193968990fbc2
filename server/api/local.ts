import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import type { Principal } from '../auth/scopes.js';
import { newId } from '../ids.js';
import { JsonText } from '../json-text.js';
import { checkRouteScopes, requireScopeOf } from './access.js';
import { DispatchTable } from './dispatch.js';
import { answerError, errors } from './errors.js';
import { HANDLED, type JsonResult, type RouteDef } from './route.js';
import type { LocalAnswer, LocalRequest } from './local-types.js';
import { validBody, validParams, validQuery } from './validation.js';

export type { LocalAnswer, LocalRequest };

/**
 * The API's second transport: `/v1` requests answered without HTTP, by running the same route
 * definitions (`api/routes/*`) with the same validation, access rule and error mapping as the HTTP
 * pipeline. The phone's worker (renderer/src/phone/core-worker.ts) serves its page with it.
 *
 * What HTTP has and this has not: no Host/Origin check and no keys (the page that started the
 * worker is its only caller, and it is the owner), no rate limit, no body size limit (the page's
 * own JSON), and no idempotency record (a request reaches the worker exactly once; the key is
 * accepted and not kept). A route that writes its own response (an event stream, a download)
 * cannot run here and answers 501.
 */

const BODY_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/** Answers requests for `routes` as `principal` (the phone: its owner, with every scope). */
export function createLocalApi(app: AppContext, routes: readonly RouteDef[], principal: Principal): (request: LocalRequest) => Promise<LocalAnswer> {
  const table = new DispatchTable<RouteDef>(routes.map((route) => ({ method: route.method, path: route.path, mountPrefix: '', steps: route })));
  return async (request) => {
    const requestId = newId('req');
    const headers: Record<string, string> = { 'Request-Id': requestId };
    try {
      const match = table.match(request.method, request.path);
      if (!match) throw errors.routeMissing(request.method, request.path);
      const route = match.route.steps;
      if (route.access !== 'public') checkRouteScopes(route, principal);
      const params = validParams(route, match.params);
      const query = validQuery(route, request.query ?? {});
      const body = BODY_METHODS.has(request.method) ? validBody(route, request.body ? parseJson(request.body) : {}) : undefined;
      const result = await route.handler({
        app,
        query,
        params,
        body,
        principal,
        requestId,
        // The phone's routes read only request headers (If-Match); none writes its own response.
        req: { method: request.method, headers: request.headers ?? {} } as unknown as Request,
        res: undefined as unknown as Response,
        requireScope: requireScopeOf(principal),
      });
      if (result === HANDLED) throw errors.notHere(request.method, request.path);
      return answer(result, route, headers);
    } catch (err) {
      const e = answerError(err, requestId, app.log);
      return { status: e.status, headers: { ...headers, ...e.headers }, body: JSON.stringify(e.toBody(requestId)) };
    }
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}

function answer(result: JsonResult, route: RouteDef, headers: Record<string, string>): LocalAnswer {
  const status = result.status ?? 200;
  const body = result.body instanceof JsonText ? result.body.text() : JSON.stringify(result.body);
  const all = { ...headers, ...result.headers };
  if (route.etag && status >= 200 && status < 300) all.ETag = route.etag(body);
  return { status, headers: all, body };
}
