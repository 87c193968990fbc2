import { isIP } from 'node:net';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../app-context.js';
import { canonicalJson } from '../canonical-json.js';
import { authenticateKey, authenticateSession, SESSION_COOKIE } from '../auth/keys.js';
import { isBusyError } from '../db/connection.js';
import { newId } from '../ids.js';
import { JsonText } from '../json-text.js';
import type { UrlMatch } from './dispatch.js';
import { answerError, ApiError, errors } from './errors.js';
import { idempotencyKeyOf, recordAnswer, recordClientError, replayOf, requestHashOf, runOnce, storedAnswer, type HeldKey } from './idempotency.js';
import { checkRouteScopes, requireScopeOf } from './access.js';
import { loadExpress } from './express.js';
import type { RateLimiter } from './rate-limit.js';
import type { Principal } from '../auth/scopes.js';
import { HANDLED, type JsonResult, type RequestContext, type RouteDef } from './route.js';
import { validBody, validParams, validQuery } from './validation.js';

/**
 * The middleware of the HTTP pipeline, one function per step. http.ts puts them in their order;
 * this module says what each step does.
 */

export const MAX_BODY_BYTES = 64 * 1024;

/** What the pipeline learns about a request on its way to the handler. */
interface RequestState {
  requestId: string;
  principal: Principal | null;
  /** The path as the route's router shows it (`req.baseUrl + req.path`): the idempotency hash covers it. */
  routerPath?: string;
  /** Methods of routes whose path matched but whose method did not (for 405's Allow). */
  allowedMethods?: string[];
  query?: unknown;
  params?: unknown;
  body?: unknown;
  idempotency?: IdempotencyState;
}

interface IdempotencyState extends HeldKey {
  /** A streamed body: the hash is completed (and the key looked up) once the handler has read it. */
  awaitingBody?: { method: string; path: string };
}

function state(res: Response): RequestState {
  return res.locals as RequestState;
}

/**
 * Writes a JSON answer in one write: headers and body together (res.json would turn the body into
 * a Buffer and send the two apart, which costs a writev per response under load).
 */
export function sendJson(res: Response, status: number, body: unknown, headers?: Record<string, string>, etag?: RouteDef['etag']): void {
  const text = body instanceof JsonText ? body : undefined;
  const payload = text ? '' : JSON.stringify(body);
  const all: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': text ? text.byteLength() : Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  if (headers) Object.assign(all, headers);
  // From the text being sent, so the body is serialised once.
  if (etag && !text && status >= 200 && status < 300) all.ETag = etag(payload);
  res.writeHead(status, all);
  if (!text) {
    res.end(payload);
    return;
  }
  // Corked, so the headers and every part leave in one write.
  res.cork();
  for (const part of text.parts) res.write(part);
  res.end();
}

// ---- 1. Request id --------------------------------------------------------------------------

export const assignRequestId: RequestHandler = (_req, res, next) => {
  const requestId = newId('req');
  res.locals.requestId = requestId;
  res.locals.principal = null;
  res.setHeader('Request-Id', requestId);
  next();
};

// ---- 2. Host allow-list and Origin check (DNS rebinding and cross-site defence) -------------

/** Loopback names and addresses: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  const colon = hostHeader.lastIndexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

export function checkHostAndOrigin(allowedHostNames: readonly string[]): RequestHandler {
  const allowed = new Set(allowedHostNames.map((h) => h.toLowerCase()));
  // Host headers already accepted: a client sends the same one on every request, and the answer
  // depends on nothing else. Refused ones are not kept, so made-up names cannot grow it.
  const accepted = new Set<string>();
  return (req, _res, next) => {
    const host = req.headers.host;
    if (!host) throw errors.hostNotAllowed('(none)');
    if (!accepted.has(host)) {
      const name = hostnameOf(host).toLowerCase();
      if (!isLoopbackHost(name) && !allowed.has(name.replace(/^\[|\]$/g, ''))) throw errors.hostNotAllowed(name);
      if (accepted.size >= 64) accepted.clear();
      accepted.add(host);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`) throw errors.originNotAllowed(origin);
    next();
  };
}

// ---- Query strings: the first value of each name, as URLSearchParams reads them -------------

export function firstValueQuery(search: string): Record<string, string> {
  const values = new Map<string, string>();
  for (const [k, v] of new URLSearchParams(search)) if (!values.has(k)) values.set(k, v);
  return Object.fromEntries(values);
}

// ---- Route matching: a route answers its own method; others learn the path exists -----------

export function onlyMethod(method: string): RequestHandler {
  return (req, res, next) => {
    if (req.method === method) {
      state(res).routerPath = req.baseUrl + req.path;
      return next();
    }
    const s = state(res);
    (s.allowedMethods ??= []).push(method);
    next('route');
  };
}

/**
 * What Express gives a request before its route's steps, for one the dispatch table (dispatch.ts)
 * runs without Express: the response's locals (this pipeline's state), the route's parameters,
 * the query as the app's query parser reads it, and the path the idempotency hash covers.
 */
export function prepareDispatched(req: Request, res: Response, match: UrlMatch): void {
  res.locals = Object.create(null) as Response['locals'];
  req.params = match.params;
  // Express's req.query getter: the query parser on parseurl's query (an absent one reads as {}).
  (req as { query: unknown }).query = match.query === null ? {} : firstValueQuery(match.query);
  state(res).routerPath = match.routerPath;
}

/** Under /v1, after every router: 405 when the path exists with other methods, else 404. */
export const unmatchedApiRoute: RequestHandler = (req, res) => {
  const allowed = state(res).allowedMethods;
  if (allowed?.length) throw errors.methodNotAllowed(req.method, req.originalUrl.split('?')[0]!, [...new Set(allowed)]);
  throw errors.routeMissing(req.method, req.originalUrl.split('?')[0]!);
};

// ---- 3. Authentication, rate limit and scopes ------------------------------------------------

function authenticate(app: AppContext, req: Request): Principal | null {
  const header = req.headers.authorization;
  const now = app.clock.now();
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw errors.invalidApiKey();
    const principal = authenticateKey(app.db, m[1]!, now, !app.writes.closed);
    if (!principal) throw errors.invalidApiKey();
    return principal;
  }
  const session = (req.cookies as Record<string, string> | undefined)?.[SESSION_COOKIE];
  if (session !== undefined) {
    const principal = authenticateSession(app.db, session, now);
    if (!principal) throw errors.invalidApiKey();
    // A cookie travels with cross-site requests; writes must prove they come from our page.
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.headers.origin === undefined) {
      throw errors.originNotAllowed('(missing Origin on a cookie-authenticated write)');
    }
    return principal;
  }
  return null;
}

export function authorize(app: AppContext, route: RouteDef, limiter: RateLimiter): RequestHandler {
  return (req, res, next) => {
    if (route.access === 'public') return next();
    // While a restore swaps the database, only public routes (health, OpenAPI) answer.
    if (app.unavailable) throw errors.unavailable(app.unavailable.code, app.unavailable.message, 2);
    const principal = authenticate(app, req);
    if (!principal) throw errors.missingApiKey();
    if (!limiter.take(principal.id)) throw errors.rateLimited(1);
    checkRouteScopes(route, principal);
    state(res).principal = principal;
    next();
  };
}

// ---- 4. Path and query validation ------------------------------------------------------------

export function validateParamsAndQuery(route: RouteDef): RequestHandler {
  return (req, res, next) => {
    const s = state(res);
    s.params = validParams(route, req.params);
    s.query = validQuery(route, req.query);
    next();
  };
}

// ---- 5. Body parsing: JSON only, within the route's size limit (413, 415, invalid_json) -----

const BODY_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/** body-parser's errors, as the API's. */
export function bodyError(err: { type?: string; message: string }, limit: number, req: Request): ApiError | Error {
  switch (err.type) {
    case 'entity.too.large':
      return errors.bodyTooLarge(limit);
    case 'entity.parse.failed':
      return errors.invalidJson(err.message);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return errors.unsupportedMediaType(req.headers['content-type']);
    default:
      return err as Error;
  }
}

export function hasNonEmptyBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

export function parseBody(route: RouteDef): RequestHandler {
  const limit = route.maxBodyBytes ?? MAX_BODY_BYTES;
  let json: RequestHandler | undefined;
  const parse = (req: Request, res: Response, next: NextFunction) => {
    if (json) return json(req, res, next);
    loadExpress().then((express) => {
      // strict: false lets a JSON scalar through to the schema, which names what is wrong with it.
      json ??= express.json({ limit, strict: false, type: 'application/json' });
      json(req, res, next);
    }, next);
  };
  return (req, res, next) => {
    // A route that streams its body (multipart uploads) reads it itself.
    if (!BODY_METHODS.has(req.method) || route.streamsBody) return next();
    parse(req, res, (err?: unknown) => {
      if (err) return next(bodyError(err as { type?: string; message: string }, limit, req));
      if (!route.body) return next();
      let body: unknown = req.body;
      if (body === undefined) {
        // Not parsed: either no body at all (an empty object) or a body of another type.
        if (hasNonEmptyBody(req)) return next(errors.unsupportedMediaType(req.headers['content-type']));
        body = {};
      }
      try {
        state(res).body = validBody(route, body);
      } catch (e) {
        return next(e);
      }
      next();
    });
  };
}

// ---- 6. Idempotency: a repeated key replays the first answer (Stripe's semantics) -----------

/**
 * Streamed-body requests under way, per service and then per principal and key: a concurrent
 * duplicate is refused, not run twice. Per service, since a process may run several (tests).
 */
const streamedKeysInFlight = new WeakMap<AppContext, Set<string>>();

export function idempotency(app: AppContext, route: RouteDef): RequestHandler {
  return (req, res, next) => {
    const key = idempotencyKeyOf(req.method, req.headers['idempotency-key']);
    if (key === undefined) return next();
    const s = state(res);
    const principalId = s.principal?.id ?? 'public';
    const nowMs = app.clock.now();
    // As the route's router shows it (baseUrl + path), whether Express or the dispatch table routed it.
    const path = s.routerPath!;
    if (route.streamsBody) {
      // The body (an upload) is not read yet, so whether a stored answer may be replayed is decided
      // by the handler once it has read it (RequestContext.idempotency). Until then the key is
      // held: a second request with it, sent before the first has finished, is refused.
      let keys = streamedKeysInFlight.get(app);
      if (!keys) streamedKeysInFlight.set(app, (keys = new Set()));
      const inFlight = `${principalId}\n${key}`;
      if (keys.has(inFlight)) throw errors.idempotencyInProgress();
      keys.add(inFlight);
      res.once('close', () => keys.delete(inFlight));
      s.idempotency = { principalId, key, requestHash: '', nowMs, awaitingBody: { method: req.method, path } };
      return next();
    }
    const held = { principalId, key, requestHash: requestHashOf(req.method, path, s.body === undefined ? '' : canonicalJson(s.body)), nowMs };
    const previous = storedAnswer(app, held);
    if (previous) {
      const replay = replayOf(previous, held);
      sendJson(res, replay.status!, replay.body, replay.headers, route.etag);
      return;
    }
    s.idempotency = held;
    next();
  };
}

/**
 * For a handler that read its body itself: completes the Idempotency-Key's request hash with the
 * digest of what it read, and returns the first answer to replay (or throws idempotency_conflict
 * when the key came with other content), or null when the request is new and runs.
 */
function settleStreamedIdempotency(app: AppContext, s: RequestState, bodyDigest: string): JsonResult | null {
  const saved = s.idempotency;
  if (!saved?.awaitingBody) return null;
  saved.requestHash = requestHashOf(saved.awaitingBody.method, saved.awaitingBody.path, bodyDigest);
  delete saved.awaitingBody;
  const previous = storedAnswer(app, saved);
  if (!previous) return null;
  // Answered from the record: nothing of this request is recorded over the first one's.
  delete s.idempotency;
  return replayOf(previous, saved);
}

// ---- 7. The handler ------------------------------------------------------------------------

export function runHandler(app: AppContext, route: RouteDef): RequestHandler {
  const isAsync = route.handler.constructor.name === 'AsyncFunction';

  const saveClientError = (s: RequestState, err: unknown) => {
    // A streamed body that failed before it was read whole has no request hash to record.
    if (s.idempotency && !s.idempotency.awaitingBody) recordClientError(app, s.idempotency, err, s.requestId);
  };

  const respond = (res: Response, s: RequestState, result: JsonResult | typeof HANDLED, recordIt: boolean): void => {
    if (result === HANDLED) return;
    const status = result.status ?? 200;
    const saved = s.idempotency;
    if (recordIt && saved && !saved.awaitingBody) recordAnswer(app, saved, status, result.body);
    sendJson(res, status, result.body, result.headers, route.etag);
  };

  /** Async handlers (back up now, a webhook test, a restore): their response is recorded once they finish. */
  const awaitResult = async (res: Response, s: RequestState, pending: Promise<JsonResult | typeof HANDLED>): Promise<void> => {
    let result: JsonResult | typeof HANDLED;
    try {
      result = await pending;
    } catch (err) {
      saveClientError(s, err);
      throw err;
    }
    respond(res, s, result, true);
  };

  // A synchronous handler answers synchronously (no promise, no microtask per request); an async
  // one returns the promise, whose rejection Express passes to the error writer as it would a throw.
  const run = (req: Request, res: Response): void | Promise<void> => {
    const s = state(res);
    const ctx: RequestContext<unknown, unknown, unknown> = {
      app,
      query: s.query,
      params: s.params,
      body: s.body,
      principal: s.principal,
      requestId: s.requestId,
      req,
      res,
      requireScope: requireScopeOf(s.principal),
      ...(s.idempotency?.awaitingBody ? { idempotency: { settle: (bodyDigest: string) => settleStreamedIdempotency(app, s, bodyDigest) } } : {}),
    };
    const saved = s.idempotency;
    if (saved && !isAsync) {
      let once: ReturnType<typeof runOnce>;
      try {
        once = runOnce(app, saved, () => route.handler(ctx) as JsonResult | typeof HANDLED);
      } catch (err) {
        saveClientError(s, err);
        throw err;
      }
      return respond(res, s, 'previous' in once ? replayOf(once.previous, saved) : once.result, false);
    }
    let result: ReturnType<RouteDef['handler']>;
    try {
      result = route.handler(ctx);
    } catch (err) {
      saveClientError(s, err);
      throw err;
    }
    if (result instanceof Promise) return awaitResult(res, s, result);
    respond(res, s, result, true);
  };

  if (READ_ONLY_METHODS.has(route.method)) return run;
  /**
   * Another program holds the write lock (the connection's busy timeout is 0, so the handler's
   * write failed at once and its transaction wrote nothing): try again whenever the lock is free,
   * waiting on the event loop so that other requests are answered meanwhile, and answer 503
   * storage_busy once it has lasted STORAGE_BUSY_LIMIT_MS. Only a synchronous handler is run
   * again: it writes in one transaction, which SQLite refused whole. An async one answers 503 at once.
   */
  const runWhenWritable = async (req: Request, res: Response, sinceMs: number): Promise<void> => {
    for (;;) {
      await app.writes.writable({ sinceMs });
      try {
        return await run(req, res);
      } catch (err) {
        if (isAsync || !isBusyError(err)) throw err;
      }
    }
  };
  return (req, res) => {
    try {
      return run(req, res);
    } catch (err) {
      if (isAsync || !isBusyError(err)) throw err;
      return runWhenWritable(req, res, app.clock.now());
    }
  };
}

/** Methods that never write (the last-used stamp of a key is skipped while the gate is closed). */
export const READ_ONLY_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

// ---- 8. The one error writer ----------------------------------------------------------------

export function errorResponder(app: AppContext): ErrorRequestHandler {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const requestId = state(res).requestId;
    const e = answerError(err, requestId, app.log);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // After an oversize body the rest of it is not wanted: close rather than keep the connection.
    if (e.code === 'body_too_large') res.setHeader('Connection', 'close');
    sendJson(res, e.status, e.toBody(requestId), e.headers);
  };
}
