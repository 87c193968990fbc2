import type { Request, Response } from 'express';
import type { AppContext } from '../app-context.js';
import type { Principal } from '../auth/scopes.js';
import { canonicalJson } from '../canonical-json.js';
import { newId } from '../ids.js';
import { JsonText } from '../json-text.js';
import { checkRouteScopes, requireScopeOf } from './access.js';
import { DispatchTable } from './dispatch.js';
import { answerError, errors } from './errors.js';
import { idempotencyKeyOf, recordAnswer, recordClientError, replayOf, requestHashOf, runOnce, storedAnswer, type HeldKey } from './idempotency.js';
import { HANDLED, type JsonResult, type RouteDef } from './route.js';
import type { LocalAnswer, LocalRequest } from './local-types.js';
import { validBody, validParams, validQuery } from './validation.js';

export type { LocalAnswer, LocalRequest };

/**
 * The API's second transport: `/v1` requests answered without HTTP, by running the same route
 * definitions (`api/routes/*`) with the same validation, access rule and error mapping as the HTTP
 * pipeline. The phone's worker (renderer/src/phone/core-worker.ts) serves its page with it.
 *
 * An Idempotency-Key is held to the same rules (idempotency.ts): a write with a key is answered
 * once, the same key again replays that answer, and the same key with another request is refused.
 * The screens send one with each new meal, so a Log pressed again after an error never logs twice.
 *
 * What HTTP has and this has not: no Host/Origin check and no keys (the page that started the
 * worker is its only caller, and it is the owner), no rate limit, no body size limit (the page's
 * own JSON), and no write-lock retry (the worker's connection is the database's only one). A route
 * that writes its own response (an event stream, a download) or reads its own body (an upload)
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
      // An upload reads its own body from the request stream, which there is not here.
      if (route.streamsBody) throw errors.notHere(request.method, request.path);
      const body = BODY_METHODS.has(request.method) ? validBody(route, request.body ? parseJson(request.body) : {}) : undefined;
      const key = idempotencyKeyOf(request.method, request.headers?.['idempotency-key']);
      const held = key === undefined ? undefined : { principalId: principal.id, key, requestHash: requestHashOf(request.method, request.path, body === undefined ? '' : canonicalJson(body)), nowMs: app.clock.now() };
      const previous = held && storedAnswer(app, held);
      if (previous) return answer(replayOf(previous, held), route, headers);
      const run = () => route.handler({
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
      const result = held ? await runHeld(app, route, held, run, requestId) : await run();
      if (result === HANDLED) throw errors.notHere(request.method, request.path);
      return answer(result, route, headers);
    } catch (err) {
      const e = answerError(err, requestId, app.log);
      return { status: e.status, headers: { ...headers, ...e.headers }, body: JSON.stringify(e.toBody(requestId)) };
    }
  };
}

/**
 * A write under its key, as the HTTP pipeline runs it: a synchronous handler in one transaction with
 * the key's look-up and record, an async one (join, leave) recorded once it has answered; a client
 * error is recorded too.
 */
async function runHeld(app: AppContext, route: RouteDef, held: HeldKey, run: () => ReturnType<RouteDef['handler']>, requestId: string): Promise<JsonResult | typeof HANDLED> {
  const isAsync = route.handler.constructor.name === 'AsyncFunction';
  let outcome: ReturnType<typeof runOnce>;
  try {
    outcome = isAsync ? { result: await run() } : runOnce(app, held, run as () => JsonResult | typeof HANDLED);
  } catch (err) {
    recordClientError(app, held, err, requestId);
    throw err;
  }
  if ('previous' in outcome) return replayOf(outcome.previous, held);
  if (isAsync && outcome.result !== HANDLED) recordAnswer(app, held, outcome.result.status ?? 200, outcome.result.body);
  return outcome.result;
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
