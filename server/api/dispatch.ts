import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A precompiled method + path table in front of Express. Express finds a route by walking
 * layers: the app's middleware, every resource router whose mount prefix the path starts with,
 * then each of that router's routes, matching a regular expression at every step; and before
 * any of it, it re-parents the request and response objects onto its own prototypes, which
 * makes every later property access on them slower. Together that was about half of a one-meal
 * request's CPU (a bare Express app answering a constant costs ~60 µs a request more than
 * node:http on the bench machine). The table finds the same route with one Map look-up by method
 * and segment count and a comparison per literal segment, then runs the same steps on Node's
 * own request and response (which is all the steps and handlers use).
 *
 * It only answers what it can decide exactly as Express would: a path of plain segments
 * (unreserved characters, no percent-encoding, no empty segment) in a URL that parseurl reads
 * the simple way (starting with '/', no whitespace or '#'), whose method and path match a route.
 * Anything else (a percent-encoded or odd path, an unknown path, a known path with another method,
 * OPTIONS, HEAD, the renderer) goes to the Express app, unchanged, which answers it as before:
 * 404, 405 with Allow, a decoding error, a file. On a plain path the two agree because a route's
 * `{param}` is one whole segment (path-to-regexp's `[^/]+`, decoded only when it holds a `%`),
 * literal segments match case-sensitively, and one trailing slash is allowed (strict: false).
 */

/**
 * A route as the table knows it: its template, the prefix its router is mounted at, its steps
 * (the HTTP pipeline's middleware; the phone's local transport, api/local.ts, keeps the route's
 * definition there instead and runs it without HTTP).
 */
export interface DispatchRoute<S = RequestHandler[]> {
  method: string;
  /** OpenAPI-style template, e.g. /v1/nutrition/meals/{id}. */
  path: string;
  /** The literal prefix its resource router is mounted at (see commonPrefix in http.ts). */
  mountPrefix: string;
  /** Every middleware a request to it meets, in order; the last one answers. */
  steps: S;
}

interface CompiledRoute<S> {
  /** Per segment: the literal it must equal, or null for a `{param}`. */
  literals: (string | null)[];
  /** Parameter names, in segment order. */
  names: string[];
  mountPrefix: string;
  steps: S;
}

export interface Match<S = RequestHandler[]> {
  route: CompiledRoute<S>;
  params: Record<string, string>;
  /** The path as the routers show it to a route: `req.baseUrl + req.path` (the idempotency hash). */
  routerPath: string;
}

export interface UrlMatch extends Match {
  /** The query string after the first '?' (parseurl's `query`), or null without one. */
  query: string | null;
}

/** Segments made of unreserved characters only: nothing to decode, nothing to normalise. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)+\/?$/;
/** The characters that make parseurl hand a URL to url.parse instead of splitting it at '?'. */
const NOT_SIMPLE_URL = /[\t\n\f\r #\u00a0\ufeff]/;

export class DispatchTable<S = RequestHandler[]> {
  /** method → segment count → routes, in the routers' order (the first that matches answers). */
  private readonly byMethod = new Map<string, Map<number, CompiledRoute<S>[]>>();

  constructor(routes: readonly DispatchRoute<S>[]) {
    for (const r of routes) {
      const segments = r.path.split('/').slice(1);
      const compiled: CompiledRoute<S> = {
        literals: segments.map((s) => (/^\{\w+\}$/.test(s) ? null : s)),
        names: segments.filter((s) => /^\{\w+\}$/.test(s)).map((s) => s.slice(1, -1)),
        mountPrefix: r.mountPrefix,
        steps: r.steps,
      };
      let bySize = this.byMethod.get(r.method);
      if (!bySize) this.byMethod.set(r.method, (bySize = new Map()));
      const list = bySize.get(segments.length);
      if (list) list.push(compiled);
      else bySize.set(segments.length, [compiled]);
    }
  }

  /** The route a plain path and method reach, with its parameters; undefined: leave it to the routers. */
  match(method: string, pathname: string): Match<S> | undefined {
    const bySize = this.byMethod.get(method);
    if (!bySize || !PLAIN_PATH.test(pathname)) return undefined;
    const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
    const segments = path.split('/');
    // segments[0] is the empty string before the leading slash.
    const candidates = bySize.get(segments.length - 1);
    if (!candidates) return undefined;
    search: for (const route of candidates) {
      const { literals } = route;
      for (let i = 0; i < literals.length; i++) {
        const literal = literals[i];
        if (literal !== null && literal !== segments[i + 1]) continue search;
      }
      const params: Record<string, string> = {};
      for (let i = 0, n = 0; i < literals.length; i++) if (literals[i] === null) params[route.names[n++]!] = segments[i + 1]!;
      // The router strips its mount prefix and shows the rest as req.path ('/' when nothing is left).
      const rest = pathname.slice(route.mountPrefix.length);
      return { route, params, routerPath: route.mountPrefix + (rest === '' ? '/' : rest) };
    }
    return undefined;
  }

  /** match() for a request line's URL, as parseurl would split it; undefined: leave it to Express. */
  matchUrl(method: string, url: string): UrlMatch | undefined {
    if (url.charCodeAt(0) !== 0x2f /* / */ || NOT_SIMPLE_URL.test(url)) return undefined;
    const q = url.indexOf('?');
    const match = this.match(method, q === -1 ? url : url.slice(0, q)) as UrlMatch | undefined;
    if (match) match.query = q === -1 ? null : url.slice(q + 1);
    return match;
  }

  /**
   * The server's request listener: a request the table answers runs its route's steps on Node's
   * request and response, its errors going to `onError` (the one error writer); any other goes to
   * `fallback` (the Express app). `prepare` gives the request what Express would have: its
   * parameters, query and state.
   */
  listener(
    this: DispatchTable,
    prepare: (req: Request, res: Response, match: UrlMatch) => void,
    onError: ErrorRequestHandler,
    fallback: (req: IncomingMessage, res: ServerResponse) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void {
    return (request, response) => {
      const match = this.matchUrl(request.method ?? '', request.url ?? '');
      if (!match) return fallback(request, response);
      const req = request as Request;
      const res = response as Response;
      prepare(req, res, match);
      const fail = (err: unknown) => onError(err, req, res, fail);
      // The last step answers; a step that let the request past it would be a defect of the route.
      runSteps(match.route.steps, req, res, fail, () => fail(new Error(`route steps ended without an answer: ${req.method} ${req.url}`)));
    };
  }
}

/**
 * Middleware steps run as one Express layer, in order: each step gets a `next` that starts the
 * following one, as Express's would; an error (thrown, passed to next, or a rejected promise)
 * goes to the app's next, so to the one error writer; after the last step the request goes on
 * to the app's next layer. Express spends a few microseconds on every layer it walks a request
 * through (path matching, parameter processing, prefix trimming); a chain costs one.
 */
export function chain(steps: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => runSteps(steps, req, res, next, next);
}

/**
 * Runs steps as Express runs its layers (see chain); `end` is called when the last step calls
 * its next without an error.
 */
function runSteps(steps: readonly RequestHandler[], req: Request, res: Response, done: NextFunction, end: () => void): void {
  let index = 0;
  const next = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const step = steps[index++];
    if (!step) return end();
    try {
      const result: unknown = step(req, res, next);
      if (result instanceof Promise) result.then(undefined, (e: unknown) => done(e ?? new Error('Rejected promise')));
    } catch (e) {
      done(e);
    }
  };
  next();
}
