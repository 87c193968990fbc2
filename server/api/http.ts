import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import cookieParser from 'cookie-parser';
import type { Express, Request, Response, RequestHandler, Router } from 'express';
import type { AppContext } from '../app-context.js';
import {
  assignRequestId,
  authorize,
  checkHostAndOrigin,
  errorResponder,
  firstValueQuery,
  idempotency,
  onlyMethod,
  parseBody,
  prepareDispatched,
  READ_ONLY_METHODS,
  runHandler,
  unmatchedApiRoute,
  validateParamsAndQuery,
} from './pipeline.js';
import { DEFAULT_RATE_LIMIT, RateLimiter } from './rate-limit.js';
import type { RouteDef } from './route.js';
import { chain, DispatchTable, type DispatchRoute } from './dispatch.js';
import { rendererRouter } from './static.js';
import { loadExpress, type ExpressModule } from './express.js';

export interface HttpOptions {
  /** Host names accepted besides loopback (the --host the server binds, --allowed-host values). */
  allowedHosts?: string[];
  /** Built renderer to serve at / (browser mode); absent means API only. */
  staticDir?: string;
  rateLimit?: { perSecond: number; burst: number };
}

/** `/v1/nutrition/meals/{id}` (OpenAPI) → `/v1/nutrition/meals/:id` (Express). */
export function expressPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The literal path segments every one of a resource's routes starts with (`/v1/nutrition/meals`
 * for the meal routes), where its router is mounted: a request then walks only the routers whose
 * prefix its path starts with, and within one only that resource's routes, instead of every
 * route of the API. It stops before the first `{param}` so the mount path itself has none.
 */
export function commonPrefix(paths: readonly string[]): string {
  const split = paths.map((p) => p.split('/').slice(1));
  const shortest = Math.min(...split.map((s) => s.length));
  const prefix: string[] = [];
  for (let i = 0; i < shortest; i++) {
    const segment = split[0]![i]!;
    if (segment.includes('{') || !split.every((s) => s[i] === segment)) break;
    prefix.push(segment);
  }
  return `/${prefix.join('/')}`;
}

/**
 * One express.Router per resource (the route's OpenAPI tag), mounted at its routes' common
 * prefix in the API's router; each route a chain of the pipeline's steps in the order a request
 * meets them. The same steps, in the same order and after the same first steps, make the
 * dispatch table that answers plain paths without Express (dispatch.ts). The routers are built
 * on the first request the table leaves to Express, not at start: building them (a regular
 * expression per route, Express's layers) was a tenth of `chyme serve`'s cold start, and the
 * first requests of a client are plain /v1 paths.
 */
function apiRouters(app: AppContext, routes: RouteDef[], limiter: RateLimiter, firstSteps: RequestHandler[]): { router: (express: ExpressModule) => Router; table: DispatchTable } {
  const byTag = new Map<string, RouteDef[]>();
  for (const route of routes) {
    const list = byTag.get(route.tag);
    if (list) list.push(route);
    else byTag.set(route.tag, [route]);
  }
  const dispatched: DispatchRoute[] = [];
  const mounts: { prefix: string; routes: { route: RouteDef; steps: RequestHandler[] }[] }[] = [];
  for (const tagRoutes of byTag.values()) {
    const prefix = commonPrefix(tagRoutes.map((r) => r.path));
    const mount: (typeof mounts)[number] = { prefix, routes: [] };
    for (const route of tagRoutes) {
      const steps = [
        authorize(app, route, limiter), // authentication, rate limit and scopes, before any body is read
        validateParamsAndQuery(route),
        parseBody(route), // 64 KiB (or the route's own limit), JSON only: 413, 415, invalid_json
        idempotency(app, route),
        runHandler(app, route),
      ];
      mount.routes.push({ route, steps });
      dispatched.push({ method: route.method, path: route.path, mountPrefix: prefix, steps: [...firstSteps, ...steps] });
    }
    mounts.push(mount);
  }
  const router = (express: ExpressModule) => {
    // Case-sensitive mount points, as the routes themselves are: /V1/... is not /v1/...
    const api = express.Router({ caseSensitive: true, strict: false });
    for (const mount of mounts) {
      const resource = express.Router({ caseSensitive: true, strict: false });
      for (const { route, steps } of mount.routes) resource.all(expressPath(route.path.slice(mount.prefix.length)) || '/', onlyMethod(route.method), ...steps);
      api.use(mount.prefix, resource);
    }
    return api;
  };
  return { router, table: new DispatchTable(dispatched) };
}

/**
 * The service's request listener. Every request passes, in this order: a Request-Id, the Host
 * allow-list and Origin check, cookie parsing, then either a /v1 route (see apiRouters) or the
 * renderer, and any failure ends in the one error writer. A request to a route on a plain path
 * goes through those steps straight from the dispatch table; every other one goes through the
 * Express app, whose layers run the same steps (built on the first such request).
 */
export function createHttpListener(app: AppContext, routes: RouteDef[], options: HttpOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const limiter = new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const firstSteps = [assignRequestId, checkHostAndOrigin(options.allowedHosts ?? []), cookieParser()];
  const api = apiRouters(app, routes, limiter, firstSteps);
  const writeError = errorResponder(app);

  let http: Express | undefined;
  const expressApp = (express: ExpressModule): Express => {
    const built = express();
    built.disable('x-powered-by');
    built.set('etag', false);
    built.set('query parser', firstValueQuery);
    built.use(chain(firstSteps)); // one Express layer for the three (see chain)
    built.use(api.router(express));
    built.use('/v1', unmatchedApiRoute);
    built.use(rendererRouter(express, app, options.staticDir));
    built.use(writeError);
    return built;
  };

  // Express itself is imported then too (express.ts).
  const toExpress = (req: IncomingMessage, res: ServerResponse) => {
    if (http) return http(req, res);
    loadExpress().then(
      (express) => (http ??= expressApp(express))(req, res),
      // Express could not be loaded (a damaged install): a 500 from the one error writer.
      (err: unknown) => writeError(err, req as Request, Object.assign(res, { locals: {} }) as Response, () => undefined),
    );
  };
  const listener = api.table.listener(prepareDispatched, writeError, toExpress);
  return (req, res) => {
    // While an import's worker holds the write lock, a request that may write waits for it here,
    // asynchronously, rather than in SQLite's busy handler, which would stop the thread (and every
    // read) until the import commits. Reads go on. During a restore (which holds the gate too)
    // the request goes straight on, to its 503 restore_in_progress.
    if (app.writes.closed && app.unavailable === null && !READ_ONLY_METHODS.has(req.method ?? '')) {
      void app.writes.open().then(() => listener(req, res));
      return;
    }
    listener(req, res);
  };
}


/** The Node server around the listener, with timeouts that keep slow clients from holding it. */
export function createApiServer(app: AppContext, routes: RouteDef[], options: HttpOptions = {}): Server {
  const server = createServer(createHttpListener(app, routes, options));
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  // Longer than any client keeps an idle connection (undici 4 s, browsers up to 60 s): a connection
  // the server closes just as a client sends its next request on it is a request the client sees
  // fail ("other side closed"), and a busy machine widens that race (timers fire late, both sides).
  server.keepAliveTimeout = 65_000;
  return server;
}
