import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A precompiled method + path table in front of the Express routers. Express finds a route by
 * walking layers: the app's middleware, every resource router whose mount prefix the path starts
 * with, then each of that router's routes, matching a regular expression at every step (about a
 * tenth of a one-meal request's CPU). The table finds the same route with one Map look-up by
 * method and segment count and a comparison per literal segment, then runs the route's steps
 * itself.
 *
 * It only answers what it can decide exactly as the routers would: a path of plain segments
 * (unreserved characters, no percent-encoding, no empty segment), whose method and path match a
 * route. Anything else (a percent-encoded or odd path, an unknown path, a known path with another
 * method, OPTIONS, HEAD) goes on to the Express routers, unchanged, which answer it as before:
 * 404, 405 with Allow, a decoding error. On a plain path the two agree because a route's
 * `{param}` is one whole segment (path-to-regexp's `[^/]+`, decoded only when it holds a `%`),
 * literal segments match case-sensitively, and one trailing slash is allowed (strict: false).
 */

/** A route as the table knows it: its template, the prefix its router is mounted at, its steps. */
export interface DispatchRoute {
  method: string;
  /** OpenAPI-style template, e.g. /v1/nutrition/meals/{id}. */
  path: string;
  /** The literal prefix its resource router is mounted at (see commonPrefix in http.ts). */
  mountPrefix: string;
  /** The route's middleware after method matching, in order; the last one answers. */
  steps: RequestHandler[];
}

interface CompiledRoute {
  /** Per segment: the literal it must equal, or null for a `{param}`. */
  literals: (string | null)[];
  /** Parameter names, in segment order. */
  names: string[];
  mountPrefix: string;
  steps: RequestHandler[];
}

export interface Match {
  route: CompiledRoute;
  params: Record<string, string>;
  /** The path as the routers show it to a route: `req.baseUrl + req.path` (the idempotency hash). */
  routerPath: string;
}

/** Segments made of unreserved characters only: nothing to decode, nothing to normalise. */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._~-]+)+\/?$/;

export class DispatchTable {
  /** method → segment count → routes, in the routers' order (the first that matches answers). */
  private readonly byMethod = new Map<string, Map<number, CompiledRoute[]>>();

  constructor(routes: readonly DispatchRoute[]) {
    for (const r of routes) {
      const segments = r.path.split('/').slice(1);
      const compiled: CompiledRoute = {
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
  match(method: string, pathname: string): Match | undefined {
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

  /**
   * The middleware: a request the table can answer runs its route's steps here; any other goes
   * on to the next middleware (the Express routers).
   */
  middleware(onMatch: (req: Request, res: Response, match: Match) => void): RequestHandler {
    return (req, res, next) => {
      const match = this.match(req.method, req.path);
      if (!match) return next();
      req.params = match.params;
      onMatch(req, res, match);
      // The last step answers; a step that let the request past it would be a defect of the route.
      runSteps(match.route.steps, req, res, next, () => next(new Error(`route steps ended without an answer: ${req.method} ${req.originalUrl}`)));
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
