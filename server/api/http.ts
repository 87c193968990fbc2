import { createServer, type Server } from 'node:http';
import cookieParser from 'cookie-parser';
import express, { type Express, type Router } from 'express';
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
  runHandler,
  unmatchedApiRoute,
  validateParamsAndQuery,
} from './pipeline.js';
import { DEFAULT_RATE_LIMIT, RateLimiter } from './rate-limit.js';
import type { RouteDef } from './route.js';
import { rendererRouter } from './static.js';

export interface HttpOptions {
  /** Host names accepted besides loopback (the --host the server binds, --allowed-host values). */
  allowedHosts?: string[];
  /** Built renderer to serve at / (browser mode); absent means API only. */
  staticDir?: string;
  rateLimit?: { perSecond: number; burst: number };
}

/** `/v1/nutrition/meals/{id}` (OpenAPI) → `/v1/nutrition/meals/:id` (Express). */
function expressPath(template: string): string {
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
 * meets them.
 */
function apiRouter(app: AppContext, routes: RouteDef[], limiter: RateLimiter): Router {
  const byTag = new Map<string, RouteDef[]>();
  for (const route of routes) {
    const list = byTag.get(route.tag);
    if (list) list.push(route);
    else byTag.set(route.tag, [route]);
  }
  // Case-sensitive mount points, as the routes themselves are: /V1/... is not /v1/...
  const api = express.Router({ caseSensitive: true, strict: false });
  for (const tagRoutes of byTag.values()) {
    const prefix = commonPrefix(tagRoutes.map((r) => r.path));
    const router = express.Router({ caseSensitive: true, strict: false });
    for (const route of tagRoutes) {
      router.all(
        expressPath(route.path.slice(prefix.length)) || '/',
        onlyMethod(route.method),
        authorize(app, route, limiter), // authentication, rate limit and scopes, before any body is read
        validateParamsAndQuery(route),
        parseBody(route), // 64 KiB (or the route's own limit), JSON only: 413, 415, invalid_json
        idempotency(app, route),
        runHandler(app, route),
      );
    }
    api.use(prefix, router);
  }
  return api;
}

/**
 * The service's Express app. Every request passes, in this order: a Request-Id, the Host
 * allow-list and Origin check, cookie parsing, then either a /v1 route (see apiRouter) or
 * the renderer, and any failure ends in the one error writer.
 */
export function createHttpApp(app: AppContext, routes: RouteDef[], options: HttpOptions = {}): Express {
  const limiter = new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const http = express();
  http.disable('x-powered-by');
  http.set('etag', false);
  http.set('query parser', firstValueQuery);

  http.use(assignRequestId);
  http.use(checkHostAndOrigin(options.allowedHosts ?? []));
  http.use(cookieParser());
  http.use(apiRouter(app, routes, limiter));
  http.use('/v1', unmatchedApiRoute);
  http.use(rendererRouter(app, options.staticDir));
  http.use(errorResponder(app));
  return http;
}

/** The Node server around the Express app, with timeouts that keep slow clients from holding it. */
export function createApiServer(app: AppContext, routes: RouteDef[], options: HttpOptions = {}): Server {
  const server = createServer(createHttpApp(app, routes, options));
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  return server;
}
