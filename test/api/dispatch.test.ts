import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { DispatchTable } from '../../server/api/dispatch.js';
import { commonPrefix, expressPath } from '../../server/api/http.js';
import type { RouteDef } from '../../server/api/route.js';
import { backupRoutes } from '../../server/api/routes/backups.js';
import { eventStreamRoutes } from '../../server/api/routes/events-stream.js';
import { resourceRoutes } from '../../server/api/routes/index.js';
import { webhookRoutes } from '../../server/api/routes/webhooks.js';

/**
 * The dispatch table must pick, for every path it answers, the route (and parameters, and the path
 * the idempotency hash covers) that Express's routers would pick; and it must answer every plain
 * path that names a route, or the fast path silently stops being used. The reference here is
 * Express itself, laid out as http.ts lays out the API: one router per tag at its common prefix,
 * each route behind a method check.
 */

interface Template {
  method: string;
  path: string;
  tag: string;
}

// The service's routes, in createService's order (the factories' dependencies are never called:
// only the templates are used), plus overlapping templates that make order matter.
const routes: Template[] = [
  ...resourceRoutes,
  ...backupRoutes({} as never),
  ...webhookRoutes({} as never),
  ...eventStreamRoutes({} as never),
  { method: 'GET', path: '/v1/openapi.json', tag: 'System' } as RouteDef,
  { method: 'GET', path: '/v1/extra/{a}/{b}', tag: 'Extra' } as RouteDef,
  { method: 'GET', path: '/v1/extra/{a}/literal', tag: 'Extra' } as RouteDef,
  { method: 'GET', path: '/v1/extra/{a}', tag: 'Extra2' } as RouteDef,
].map((r) => ({ method: r.method, path: r.path, tag: r.tag }));

interface Answer {
  index: number;
  params: Record<string, string>;
  routerPath: string;
}

function referenceApp() {
  const byTag = new Map<string, number[]>();
  routes.forEach((r, i) => byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), i]));
  const app = express();
  const api = express.Router({ caseSensitive: true, strict: false });
  for (const indexes of byTag.values()) {
    const prefix = commonPrefix(indexes.map((i) => routes[i]!.path));
    const router = express.Router({ caseSensitive: true, strict: false });
    for (const i of indexes) {
      const route = routes[i]!;
      router.all(
        expressPath(route.path.slice(prefix.length)) || '/',
        (req, _res, next) => next(req.method === route.method ? undefined : 'route'),
        (req, res) => res.json({ index: i, params: { ...req.params } as Record<string, string>, routerPath: req.baseUrl + req.path } satisfies Answer),
      );
    }
    api.use(prefix, router);
  }
  app.use(api);
  app.use((_req, res) => res.status(404).json(null));
  app.use(((_err, _req, res, _next) => res.status(400).json(null)) as express.ErrorRequestHandler);
  return app;
}

/** Plain and not-so-plain paths around every template. */
function candidatePaths(): string[] {
  const paths = new Set<string>();
  const fills = ['meal_abc123', 'X', 'a.b', '..', '~z-_', 'sources', 'settings', 'literal', '%41', 'a%2Fb', 'é'];
  for (const { path } of routes) {
    for (const fill of fills) {
      const p = path.replace(/\{\w+\}/g, fill);
      for (const variant of [p, `${p}/`, `${p}//`, `${p}/z`, p.toUpperCase(), p.replace('/v1/', '/v1//'), `${p}.json`, p.slice(0, -1)]) {
        paths.add(variant);
      }
    }
  }
  paths.add('/');
  paths.add('/v1');
  paths.add('/v1/');
  return [...paths];
}

describe('the dispatch table', () => {
  let server: import('node:http').Server;
  let base: string;
  before(async () => {
    server = referenceApp().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  test('answers a plain path exactly as the Express routers would, and leaves every other path to them', async () => {
    const table = new DispatchTable(
      routes.map((r, index) => ({
        method: r.method,
        path: r.path,
        mountPrefix: commonPrefix(routes.filter((o) => o.tag === r.tag).map((o) => o.path)),
        steps: [() => index],
      })),
    );
    let answeredByTable = 0;
    let checked = 0;
    for (const path of candidatePaths()) {
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS']) {
        const reply = await fetch(base + path, { method });
        const expected = (await reply.json()) as Answer | null;
        const match = table.match(method, new URL(base + path).pathname);
        checked++;
        if (match) {
          answeredByTable++;
          assert.ok(expected, `${method} ${path}: the table answers a request the routers do not`);
          assert.equal(match.route.steps[0]!(null as never, null as never, null as never), expected.index, `${method} ${path}: route`);
          assert.deepEqual({ ...match.params }, expected.params, `${method} ${path}: params`);
          assert.equal(match.routerPath, expected.routerPath, `${method} ${path}: router path`);
        } else if (expected && /^[A-Za-z0-9/._~-]*$/.test(path) && !path.includes('//')) {
          assert.fail(`${method} ${path}: a plain path the routers answer (route ${expected.index}) is left to them`);
        }
      }
    }
    // The candidates exercise both sides.
    assert.ok(answeredByTable > 200, `only ${answeredByTable} of ${checked} answered by the table`);
    assert.ok(checked - answeredByTable > 1000);
  });
});
