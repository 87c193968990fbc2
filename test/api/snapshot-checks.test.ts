import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';

/** docs/api.md "Order of checks" for GET /v1/snapshot, whose scopes depend on include. */
describe('snapshot: the order of checks', () => {
  let t: TestService;
  let digestionOnly: string;
  before(async () => {
    t = await startTestService();
    digestionOnly = t.keyWith('digestion:read');
  });
  after(async () => {
    await t.stop();
  });

  const get = (qs: string, key: string | null = digestionOnly) => t.request('GET', `/v1/snapshot${qs}`, { key });

  test('the key comes first: no key is a 401 even for a malformed query', async () => {
    assert.equal((await get('?days=0&include=bogus', null)).status, 401);
  });

  test('then the query, days before include: a 400 even for sections the key could not read', async () => {
    const both = await get('?days=0&include=bogus');
    assert.equal(both.status, 400);
    assert.equal(errorOf(both).param, 'days');
    const include = await get('?include=meals,bogus');
    assert.equal(include.status, 400);
    assert.equal(errorOf(include).param, 'include');
  });

  test('then scopes, section by section in the order include lists them (default: meals first)', async () => {
    const all = await get('');
    assert.equal(all.status, 403);
    assert.match(errorOf(all).message, /nutrition:read/);
    const later = await get('?include=state,meals');
    assert.equal(later.status, 403);
    assert.match(errorOf(later).message, /nutrition:read/);
    const readable = await get('?include= state , ,scores,state');
    assert.equal(readable.status, 200, readable.text);
    assert.deepEqual(Object.keys(readable.body.digestion).sort(), ['scores', 'state']);
    assert.equal(readable.body.nutrition.meals, undefined);
  });
});
