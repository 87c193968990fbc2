import { createReadStream, existsSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { AppContext } from '../app-context.js';
import { exchangeLaunchToken, SESSION_COOKIE, SESSION_TTL_MS } from '../auth/keys.js';
import { errors } from './errors.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** The page may talk only to its own origin; recharts needs inline style attributes. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // The launch URL carries a token; never leak it to another site.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/**
 * Browser mode: serves the built renderer and turns the one-time `?token=` of the App URL into an
 * HttpOnly session cookie (as Jupyter does), then redirects to a clean URL.
 */
export async function serveStatic(
  app: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  staticDir: string | undefined,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed(method, url.pathname, ['GET', 'HEAD']);

  const token = url.searchParams.get('token');
  if (token !== null) {
    const session = exchangeLaunchToken(app.db, token, app.clock.now());
    const headers: Record<string, string> = { Location: url.pathname, 'Cache-Control': 'no-store', ...SECURITY_HEADERS };
    if (session) {
      headers['Set-Cookie'] =
        `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`;
    }
    res.writeHead(302, headers);
    res.end();
    return;
  }

  if (!staticDir || !existsSync(join(staticDir, 'index.html'))) {
    const body = 'Chyme API server. The app UI is not built here; the API is under /v1 (see /v1/openapi.json).\n';
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
    res.end(method === 'HEAD' ? undefined : body);
    return;
  }

  // Resolve inside staticDir only; anything that is not a file falls back to the app shell.
  const root = normalize(staticDir + sep);
  let file = normalize(join(root, decodeURIComponent(url.pathname)));
  if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) file = join(root, 'index.html');
  const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  const immutable = file.includes(`${sep}assets${sep}`);
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': statSync(file).size,
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    ...SECURITY_HEADERS,
  });
  if (method === 'HEAD') {
    res.end();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    createReadStream(file).on('error', reject).on('end', resolve).pipe(res);
  });
}
