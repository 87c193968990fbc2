import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { Response, Router } from 'express';
import type { AppContext } from '../app-context.js';
import { exchangeLaunchToken, SESSION_COOKIE, SESSION_TTL_MS } from '../auth/keys.js';
import { PAGE_SECURITY_HEADERS } from '../content-security.js';
import { errors } from './errors.js';
import type { ExpressModule } from './express.js';

/** Vite's hashed bundles never change under their name; everything else is revalidated. */
function setFileHeaders(res: Response, path: string): void {
  res.set(PAGE_SECURITY_HEADERS);
  res.set('Cache-Control', path.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
}

/**
 * Browser mode: serves the built renderer and turns the one-time `?token=` of the App URL into an
 * HttpOnly session cookie (as Jupyter does), then redirects to a clean URL. Paths that are not a
 * file get the app shell (index.html), so the renderer's own routes survive a reload.
 */
export function rendererRouter(express: ExpressModule, app: AppContext, staticDir: string | undefined): Router {
  const router = express.Router();
  router.use((req, _res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw errors.methodNotAllowed(req.method, req.path, ['GET', 'HEAD']);
    next();
  });
  router.use((req, res, next) => {
    const token = req.query.token;
    if (typeof token !== 'string') return next();
    const session = exchangeLaunchToken(app.db, token, app.clock.now());
    res.set({ 'Cache-Control': 'no-store', ...PAGE_SECURITY_HEADERS });
    if (session) {
      res.cookie(SESSION_COOKIE, session, { path: '/', httpOnly: true, sameSite: 'strict', maxAge: SESSION_TTL_MS });
    }
    res.redirect(302, req.path);
  });
  if (staticDir) {
    router.use(express.static(staticDir, { index: 'index.html', redirect: false, cacheControl: false, setHeaders: setFileHeaders }));
  }
  router.use((req, res, next) => {
    const shell = staticDir ? join(staticDir, 'index.html') : undefined;
    if (shell && existsSync(shell)) {
      setFileHeaders(res, shell);
      res.sendFile(shell, { cacheControl: false, lastModified: false }, (err) => err && next(err));
      return;
    }
    const body = 'Chyme API server. The app UI is not built here; the API is under /v1 (see /v1/openapi.json).\n';
    res.status(200).set({ 'Content-Type': 'text/plain; charset=utf-8', ...PAGE_SECURITY_HEADERS }).send(req.method === 'HEAD' ? undefined : body);
  });
  return router;
}
