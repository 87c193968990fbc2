/**
 * The API without HTTP (server/api/local.ts, the phone's transport): the same route definitions
 * give the same answers as over HTTP (status, body, ETag, error bodies but their request ids) for
 * reads, writes, validation failures, a stale If-Match, a missing route and a missing scope, and
 * hold an Idempotency-Key to the same rules.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalApi, type LocalRequest } from '../../server/api/local.js';
import { resourceRoutes } from '../../server/api/routes/index.js';
import { SCOPES, type Principal, type Scope } from '../../server/auth/scopes.js';
import { startTestService, type TestService } from '../helpers/service.js';

const LUNCH = { timestamp: '2026-11-22T12:30:00+01:00', meal_type: 'lunch', description: 'Soup', macros: { calories: 420, protein_g: 20 } };

interface Meal {
  description: string;
}

const owner = (scopes: readonly Scope[] = SCOPES): Principal => ({ kind: 'session', id: 'phone', scopes: new Set(scopes) });

/** A body with its error's request id left out (each transport gives every request its own). */
function withoutRequestId(body: unknown): unknown {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (!error) return body;
  const { request_id: id, ...rest } = error;
  assert.match(String(id), /^req_/);
  return { error: rest };
}

describe('the local transport answers as HTTP does', () => {
  let t: TestService;
  let local: ReturnType<typeof createLocalApi>;
  let mealId: string;

  before(async () => {
    t = await startTestService();
    local = createLocalApi(t.service.app, resourceRoutes, owner());
    mealId = (await t.request('POST', '/v1/nutrition/meals', { body: LUNCH })).body.id as string;
  });
  after(() => t.stop());

  /** The same request both ways; their answers must agree. */
  async function same(request: LocalRequest, key?: string): Promise<{ status: number; body: unknown }> {
    const query = new URLSearchParams(request.query ?? {}).toString();
    const http = await t.request(request.method, request.path + (query ? `?${query}` : ''), {
      ...(request.body === undefined ? {} : { rawBody: request.body, headers: { 'content-type': 'application/json', ...request.headers } }),
      ...(request.body === undefined && request.headers ? { headers: request.headers } : {}),
      ...(key ? { key } : {}),
    });
    const answer = await (key ? createLocalApi(t.service.app, resourceRoutes, owner(['digestion:read'])) : local)(request);
    const label = `${request.method} ${request.path}`;
    assert.equal(answer.status, http.status, `${label}: status`);
    assert.deepEqual(withoutRequestId(JSON.parse(answer.body)), withoutRequestId(http.body), `${label}: body`);
    assert.equal(answer.headers.ETag, http.headers.get('etag') ?? undefined, `${label}: ETag`);
    assert.match(answer.headers['Request-Id'] ?? '', /^req_/);
    return { status: answer.status, body: JSON.parse(answer.body) as unknown };
  }

  test('reads: a meal with its ETag, a list, scores, the snapshot', async () => {
    assert.equal((await same({ method: 'GET', path: `/v1/nutrition/meals/${mealId}` })).status, 200);
    await same({ method: 'GET', path: '/v1/nutrition/meals', query: { start_date: '2026-11-20', end_date: '2026-11-22' } });
    await same({ method: 'GET', path: '/v1/digestion/scores/daily', query: { start_date: '2026-11-16' } });
    await same({ method: 'GET', path: '/v1/digestion/timeline', query: { start_date: '2026-11-22', end_date: '2026-11-22' } });
    await same({ method: 'GET', path: '/v1/snapshot', query: { days: '3' } });
    await same({ method: 'GET', path: '/v1/settings' });
  });

  test('failures: invalid query and body, an unknown field, a stale If-Match, a missing route and meal, a missing scope', async () => {
    const invalid = await same({ method: 'GET', path: '/v1/nutrition/meals', query: { start_date: '22/11/2026', end_date: '2026-11-22' } });
    assert.equal(invalid.status, 400);
    assert.equal((await same({ method: 'POST', path: '/v1/nutrition/meals', body: JSON.stringify({ ...LUNCH, colour: 'red' }) })).status, 400);
    assert.equal((await same({ method: 'POST', path: '/v1/nutrition/meals', body: JSON.stringify({ ...LUNCH, meal_type: 'brunch' }) })).status, 400);
    const stale = await same({ method: 'PATCH', path: `/v1/nutrition/meals/${mealId}`, headers: { 'if-match': '"stale"' }, body: JSON.stringify({ description: 'Tomato soup' }) });
    assert.equal(stale.status, 412);
    assert.equal((await same({ method: 'GET', path: '/v1/nowhere' })).status, 404);
    assert.equal((await same({ method: 'GET', path: '/v1/nutrition/meals/meal_00000000000000000000' })).status, 404);
    const forbidden = await same({ method: 'POST', path: '/v1/nutrition/meals', body: JSON.stringify(LUNCH) }, t.keyWith('digestion:read'));
    assert.equal(forbidden.status, 403);
  });

  test('a write through the local transport is the service’s write: the meal reads back over HTTP', async () => {
    const created = await local({ method: 'POST', path: '/v1/nutrition/meals', body: JSON.stringify({ ...LUNCH, description: 'Local soup' }) });
    assert.equal(created.status, 201);
    const meal = JSON.parse(created.body) as { id: string };
    const read = await t.request('GET', `/v1/nutrition/meals/${meal.id}`);
    assert.deepEqual(read.body, meal);
    assert.equal(created.headers.ETag, read.headers.get('etag'));
  });

  test('an Idempotency-Key as over HTTP: the same write twice is answered once, with the first answer; the key with another body is refused', async () => {
    const write = (description: string, headers: Record<string, string>): LocalRequest => ({ method: 'POST', path: '/v1/nutrition/meals', headers, body: JSON.stringify({ ...LUNCH, description }) });
    const onceSoups = async () => ((await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-22&end_date=2026-11-22')).body as { data: Meal[] }).data.filter((m) => m.description === 'Once soup').length;
    const key = { 'idempotency-key': 'log-once-soup' };

    const first = await local(write('Once soup', key));
    const again = await local(write('Once soup', key));
    assert.equal(first.status, 201, first.body);
    assert.equal(again.status, 201, again.body);
    assert.equal(again.body, first.body, 'the first answer again');
    assert.equal(again.headers.ETag, first.headers.ETag);
    assert.equal(again.headers['Idempotent-Replayed'], 'true');
    assert.equal(first.headers['Idempotent-Replayed'], undefined);
    assert.equal(await onceSoups(), 1, 'one meal for the two requests');

    // The same two requests and a third with another body, over HTTP (the key is another principal's there).
    const overHttp = (description: string) => t.request('POST', '/v1/nutrition/meals', { body: { ...LUNCH, description }, headers: key });
    assert.equal((await overHttp('Once soup')).status, 201);
    assert.equal((await overHttp('Once soup')).headers.get('idempotent-replayed'), 'true');
    const httpConflict = await overHttp('Another soup');
    const conflict = await local(write('Another soup', key));
    assert.equal(conflict.status, 409);
    assert.equal(conflict.status, httpConflict.status);
    assert.deepEqual(withoutRequestId(JSON.parse(conflict.body)), withoutRequestId(httpConflict.body));
    assert.equal(await onceSoups(), 2, 'one meal per transport, nothing for the refused requests');

    // A client error is part of the answer (replayed, not run again); an invalid key is refused alike.
    const missing: LocalRequest = { method: 'PATCH', path: '/v1/nutrition/meals/meal_00000000000000000000', headers: { 'idempotency-key': 'edit-missing' }, body: JSON.stringify({ description: 'x' }) };
    assert.equal((await local(missing)).status, 404);
    const replayed = await local(missing);
    assert.equal(replayed.status, 404);
    assert.equal(replayed.headers['Idempotent-Replayed'], 'true');
    assert.equal((await same(write('Too long a key', { 'idempotency-key': 'k'.repeat(256) }))).status, 400);
  });
});
