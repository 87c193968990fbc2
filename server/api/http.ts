import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { AppContext } from '../app-context.js';
import { authenticateKey, authenticateSession, SESSION_COOKIE } from '../auth/keys.js';
import { findIdempotentResponse, saveIdempotentResponse } from '../db/idempotency.js';
import { newId } from '../ids.js';
import { ApiError, errors, storageFault } from './errors.js';
import { HANDLED, type JsonResult, type Principal, type RequestContext, type RouteDef, type Scope } from './route.js';
import { RateLimiter } from './rate-limit.js';
import { serveStatic } from './static.js';
import { parseWith } from './validation.js';

export const MAX_BODY_BYTES = 64 * 1024;
const IDEMPOTENCY_WINDOW_MS = 24 * 3600_000;

export interface HttpOptions {
  /** Host names accepted besides loopback (the --host the server binds, --allowed-host values). */
  allowedHosts?: string[];
  /** Built renderer to serve at / (browser mode); absent means API only. */
  staticDir?: string;
  rateLimit?: { perSecond: number; burst: number };
}

interface CompiledRoute {
  route: RouteDef;
  pattern: RegExp;
  paramNames: string[];
}

function compile(route: RouteDef): CompiledRoute {
  const paramNames: string[] = [];
  const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
    paramNames.push(name);
    return '([^/]+)';
  });
  return { route, pattern: new RegExp(`^${source}/?$`), paramNames };
}

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

function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
  }
  return out;
}

/** JSON with sorted keys, so two equal bodies hash alike whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(payload);
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw errors.bodyTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw errors.bodyTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export interface ApiServer {
  server: Server;
  /** Ends long-lived responses (event streams) so the server can close. */
  closeStreams(): void;
  trackStream(res: ServerResponse): void;
}

export function createApiServer(app: AppContext, routes: RouteDef[], options: HttpOptions = {}): ApiServer {
  const compiled = routes.map(compile);
  const allowedHosts = new Set((options.allowedHosts ?? []).map((h) => h.toLowerCase()));
  const limiter = new RateLimiter(options.rateLimit ?? { perSecond: 200, burst: 2000 });
  const streams = new Set<ServerResponse>();

  function checkHost(req: IncomingMessage): string {
    const host = req.headers.host;
    if (!host) throw errors.hostNotAllowed('(none)');
    const name = hostnameOf(host).toLowerCase();
    if (!isLoopbackHost(name) && !allowedHosts.has(name.replace(/^\[|\]$/g, ''))) throw errors.hostNotAllowed(name);
    return host;
  }

  function checkOrigin(req: IncomingMessage, host: string): void {
    const origin = req.headers.origin;
    if (origin === undefined) return;
    if (origin !== `http://${host}` && origin !== `https://${host}`) throw errors.originNotAllowed(origin);
  }

  function authenticate(req: IncomingMessage): Principal | null {
    const header = req.headers.authorization;
    const now = app.clock.now();
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw errors.invalidApiKey();
      const principal = authenticateKey(app.db, m[1]!, now);
      if (!principal) throw errors.invalidApiKey();
      return principal;
    }
    const session = parseCookies(req.headers.cookie).get(SESSION_COOKIE);
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

  function match(method: string, pathname: string): { route: RouteDef; params: Record<string, string> } {
    const allowed: string[] = [];
    for (const c of compiled) {
      const m = c.pattern.exec(pathname);
      if (!m) continue;
      if (c.route.method !== method) {
        allowed.push(c.route.method);
        continue;
      }
      const params: Record<string, string> = {};
      c.paramNames.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]!);
      });
      return { route: c.route, params };
    }
    if (allowed.length > 0) throw errors.methodNotAllowed(method, pathname, [...new Set(allowed)]);
    throw errors.routeMissing(method, pathname);
  }

  async function handleApi(req: IncomingMessage, res: ServerResponse, requestId: string, url: URL): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const { route, params } = match(method, url.pathname);
    // While a restore swaps the database, only public routes (health, OpenAPI) answer.
    if (app.unavailable && route.access !== 'public') throw errors.unavailable(app.unavailable.code, app.unavailable.message, 2);

    const principal = route.access === 'public' ? null : authenticate(req);
    if (route.access !== 'public' && !principal) throw errors.missingApiKey();
    if (principal && !limiter.take(principal.id)) throw errors.rateLimited(1);
    const requireScope = (scope: Scope) => {
      if (!principal?.scopes.has(scope)) throw errors.insufficientScope(scope);
    };
    if (typeof route.access === 'string' && route.access !== 'public' && route.access !== 'authenticated') requireScope(route.access);
    if (Array.isArray(route.access)) route.access.forEach(requireScope);

    const parsedParams = route.params ? parseWith(route.params, params) : params;
    const queryObject: Record<string, string> = {};
    for (const [k, v] of url.searchParams) if (!(k in queryObject)) queryObject[k] = v;
    const query = route.query ? parseWith(route.query, queryObject) : {};

    let body: unknown = undefined;
    if (method === 'POST' || method === 'PATCH' || method === 'DELETE') {
      const rawBody = await readBody(req, route.maxBodyBytes ?? MAX_BODY_BYTES);
      if (route.body) {
        let json: unknown = {};
        if (rawBody.length > 0) {
          const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
          if (type !== 'application/json') throw errors.unsupportedMediaType(req.headers['content-type']);
          try {
            json = JSON.parse(rawBody.toString('utf8'));
          } catch (err) {
            throw errors.invalidJson((err as Error).message);
          }
        }
        body = parseWith(route.body, json);
      }
    }

    const ctx: RequestContext<unknown, unknown, unknown> = {
      app,
      query,
      params: parsedParams,
      body,
      principal,
      requestId,
      req,
      res,
      requireScope,
    };

    const idempotencyKey = req.headers['idempotency-key'];
    if (method !== 'GET' && typeof idempotencyKey === 'string') {
      if (idempotencyKey.length === 0 || idempotencyKey.length > 255) {
        throw errors.parameterInvalid('Idempotency-Key', 'The Idempotency-Key header must be 1 to 255 characters.');
      }
      const principalId = principal?.id ?? 'public';
      const requestHash = createHash('sha256')
        .update(`${method} ${url.pathname}\n${body === undefined ? '' : canonicalJson(body)}`)
        .digest('hex');
      const now = app.clock.now();
      const saveClientError = (err: unknown) => {
        // Client errors are part of the request's answer: replay them too, as Stripe does.
        if (!(err instanceof ApiError) || err.status >= 500 || err.status === 429) return;
        try {
          saveIdempotentResponse(app.db, principalId, idempotencyKey, requestHash, err.status, err.toBody(requestId), now);
        } catch (saveErr) {
          // The client still gets its error; only a replay of it is lost (storage fault).
          app.log.warn('could not record an idempotent error response', { request_id: requestId, error: String(saveErr) });
        }
      };
      const replay = (previous: NonNullable<ReturnType<typeof findIdempotentResponse>>) => {
        if (previous.requestHash !== requestHash) throw errors.idempotencyConflict();
        sendJson(res, previous.status, previous.body, { 'Idempotent-Replayed': 'true' });
      };
      if (route.handler.constructor.name !== 'AsyncFunction') {
        // One transaction holds the look-up, the write and the record of its response: they commit
        // together, so a crash can never leave a write whose retry with the same key applies it
        // again, and two concurrent requests with one key cannot both run.
        let previous: ReturnType<typeof findIdempotentResponse>;
        let result: JsonResult | typeof HANDLED | undefined;
        try {
          result = app.bus.write(() => {
            previous = findIdempotentResponse(app.db, principalId, idempotencyKey, now - IDEMPOTENCY_WINDOW_MS);
            if (previous) return undefined;
            const r = route.handler(ctx) as JsonResult | typeof HANDLED;
            if (r !== HANDLED) saveIdempotentResponse(app.db, principalId, idempotencyKey, requestHash, r.status ?? 200, r.body, now);
            return r;
          });
        } catch (err) {
          saveClientError(err);
          throw err;
        }
        if (previous) return replay(previous);
        if (result === undefined || result === HANDLED) return;
        sendJson(res, result.status ?? 200, result.body, result.headers);
        return;
      }
      // Async handlers (back up now, a webhook test, a restore) cannot run inside a transaction:
      // their response is recorded once they finish.
      const previous = findIdempotentResponse(app.db, principalId, idempotencyKey, now - IDEMPOTENCY_WINDOW_MS);
      if (previous) return replay(previous);
      try {
        const result = await route.handler(ctx);
        if (result === HANDLED) return;
        const status = result.status ?? 200;
        saveIdempotentResponse(app.db, principalId, idempotencyKey, requestHash, status, result.body, now);
        sendJson(res, status, result.body, result.headers);
      } catch (err) {
        saveClientError(err);
        throw err;
      }
      return;
    }

    const result: JsonResult | typeof HANDLED = await route.handler(ctx);
    if (result === HANDLED) return;
    sendJson(res, result.status ?? 200, result.body, result.headers);
  }

  const server = createServer((req, res) => {
    const requestId = newId('req');
    res.setHeader('Request-Id', requestId);
    void (async () => {
      try {
        const host = checkHost(req);
        checkOrigin(req, host);
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (url.pathname === '/v1' || url.pathname.startsWith('/v1/')) {
          await handleApi(req, res, requestId, url);
        } else {
          await serveStatic(app, req, res, url, options.staticDir);
        }
      } catch (err) {
        const apiError = err instanceof ApiError ? err : storageFault(err);
        if (!(err instanceof ApiError)) app.log.error(apiError ? 'storage fault' : 'unhandled error', { request_id: requestId, error: String((err as Error)?.stack ?? err) });
        const e = apiError ?? errors.internal();
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // After an oversize body the rest of it is not read: close rather than drain it.
        if (e.code === 'body_too_large') res.setHeader('Connection', 'close');
        sendJson(res, e.status, e.toBody(requestId), e.headers);
      }
    })();
  });
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;

  return {
    server,
    trackStream(res) {
      streams.add(res);
      res.on('close', () => streams.delete(res));
    },
    closeStreams() {
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}

