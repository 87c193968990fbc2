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
 * One express.Router per resource (the route's OpenAPI tag), each route a chain of the pipeline's
 * steps in the order a request meets them.
 */
function resourceRouters(app: AppContext, routes: RouteDef[], limiter: RateLimiter): Router[] {
  const routers = new Map<string, Router>();
  const checkIdempotency = idempotency(app);
  for (const route of routes) {
    let router = routers.get(route.tag);
    if (!router) routers.set(route.tag, (router = express.Router({ caseSensitive: true, strict: false })));
    router.all(
      expressPath(route.path),
      onlyMethod(route.method),
      authorize(app, route, limiter), // authentication, rate limit and scopes, before any body is read
      validateParamsAndQuery(route),
      parseBody(route), // 64 KiB (or the route's own limit), JSON only: 413, 415, invalid_json
      checkIdempotency,
      runHandler(app, route),
    );
  }
  return [...routers.values()];
}

/**
 * The service's Express app. Every request passes, in this order: a Request-Id, the Host
 * allow-list and Origin check, cookie parsing, then either a /v1 route (see resourceRouters) or
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
  for (const router of resourceRouters(app, routes, limiter)) http.use(router);
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
