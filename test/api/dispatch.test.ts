import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
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
import { startTestService, type TestService } from '../helpers/service.js';

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
        steps: index,
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
          assert.equal(match.route.steps, expected.index, `${method} ${path}: route`);
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

test('matchUrl splits a URL at its first ? as parseurl does, and leaves URLs parseurl reads otherwise to Express', () => {
  const table = new DispatchTable([{ method: 'GET', path: '/v1/health', mountPrefix: '/v1', steps: [] }]);
  assert.equal(table.matchUrl('GET', '/v1/health')?.query, null);
  assert.equal(table.matchUrl('GET', '/v1/health?')?.query, '');
  assert.equal(table.matchUrl('GET', '/v1/health?a=1&b=%20?c')?.query, 'a=1&b=%20?c');
  assert.equal(table.matchUrl('GET', '/v1/health/?a')?.routerPath, '/v1/health/');
  for (const url of ['/v1/health#', '/v1/health?a#b', 'http://localhost/v1/health', '*', '/v1/health?a b', '/v1/health?\ufeff', '/v1/heal%74h']) {
    assert.equal(table.matchUrl('GET', url), undefined, url);
  }
  assert.equal(table.matchUrl('HEAD', '/v1/health'), undefined);
});

describe('the dispatch table in the service', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  /** A raw request (fetch would drop a '#' and normalise the path), with the reply's parts. */
  function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
    return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
      const url = new URL(t.baseUrl);
      const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** A reply without what differs between any two requests: its id and date. */
  function comparable(r: Awaited<ReturnType<typeof raw>>) {
    const requestId = r.headers['request-id'] as string;
    assert.match(requestId, /^req_[0-9A-Za-z]{20}$/);
    const { 'request-id': _id, date: _date, ...headers } = r.headers;
    return { status: r.status, headers, text: r.text.replaceAll(requestId, 'req_X') };
  }

  test('a request answered from the table and the same request answered by Express get the same reply', async () => {
    const key = `Bearer ${t.adminKey}`;
    const json = { authorization: key, 'content-type': 'application/json' };
    const created = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T08:00:00Z', meal_type: 'breakfast', description: 'oats' } });
    assert.equal(created.status, 201);
    const id = created.body.id as string;
    const idEncoded = id.replace('_', '%5F'); // the same id, percent-encoded: only Express decodes it
    const list = '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-22&limit=2';
    // [through the table, through Express]: a '#' or a percent-encoded parameter sends a request to Express.
    const pairs: Array<[string, string, string, Record<string, string>, string?]> = [
      ['GET', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, { authorization: key }],
      ['GET', `/v1/nutrition/meals/${id}/`, `/v1/nutrition/meals/${idEncoded}/`, { authorization: key }],
      ['GET', '/v1/nutrition/meals/meal_missing', '/v1/nutrition/meals/meal%5Fmissing', { authorization: key }],
      ['GET', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, {}],
      ['GET', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, { authorization: 'Bearer chy_nope' }],
      ['GET', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, { authorization: key, host: 'evil.example' }],
      ['GET', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, { authorization: key, origin: 'http://evil.example' }],
      ['GET', list, `${list}#`, { authorization: key }],
      ['GET', `${list}&limit=5&x`, `${list}&limit=5&x#`, { authorization: key }],
      ['GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-22&limit=0', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-22&limit=0#', { authorization: key }],
      ['GET', '/v1/nutrition/meals', '/v1/nutrition/meals#', { authorization: key }],
      ['GET', '/v1/health', '/v1/health#', {}],
      ['PATCH', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, json, '{"description":'],
      ['PATCH', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, json, '{"meal_type":"feast"}'],
      ['PATCH', `/v1/nutrition/meals/${id}`, `/v1/nutrition/meals/${idEncoded}`, { authorization: key, 'content-type': 'text/plain' }, 'x'],
      ['POST', '/v1/nutrition/meals', '/v1/nutrition/meals#', json, '{"meal_type":"lunch"}'],
    ];
    for (const [method, viaTable, viaExpress, headers, body] of pairs) {
      const a = comparable(await raw(method, viaTable, headers, body));
      const b = comparable(await raw(method, viaExpress, headers, body));
      assert.deepEqual(a, b, `${method} ${viaTable} / ${viaExpress}`);
    }
  });

  test('an Idempotency-Key used through the table replays through Express, and back: both hash the same path', async () => {
    const json = { authorization: `Bearer ${t.adminKey}`, 'content-type': 'application/json', 'idempotency-key': 'same-key' };
    const body = JSON.stringify({ timestamp: '2026-11-21T12:00:00Z', meal_type: 'lunch' });
    const first = await raw('POST', '/v1/nutrition/meals', json, body);
    assert.equal(first.status, 201);
    const replay = await raw('POST', '/v1/nutrition/meals#', json, body);
    assert.equal(replay.status, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.text, first.text);
    const json2 = { ...json, 'idempotency-key': 'other-key' };
    const viaExpress = await raw('POST', '/v1/nutrition/meals/#', json2, body);
    const viaTable = await raw('POST', '/v1/nutrition/meals/', json2, body);
    assert.equal(viaTable.headers['idempotent-replayed'], 'true');
    assert.equal(viaTable.text, viaExpress.text);
  });
});
