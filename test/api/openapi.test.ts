import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestService, type TestService } from '../helpers/service.js';

describe('OpenAPI document', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('is OpenAPI 3.1 and documents every route the server answers', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, (await t.request('GET', '/v1/health')).body.version);
    const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    for (const op of ['GET /v1/nutrition/meals', 'GET /v1/nutrition/meals/{id}', 'POST /v1/nutrition/meals', 'PATCH /v1/nutrition/meals/{id}', 'DELETE /v1/nutrition/meals/{id}', 'GET /v1/health', 'GET /v1/openapi.json', 'POST /v1/api_keys']) {
      assert.ok(ops.includes(op), op);
    }
    assert.equal(new Set(ops.map((o) => doc.paths[o.split(' ')[1]!][o.split(' ')[0]!.toLowerCase()].operationId)).size, ops.length);
  });

  test('parameters and bodies come from the validating schemas', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    const list = doc.paths['/v1/nutrition/meals'].get;
    const params = Object.fromEntries(list.parameters.map((p: any) => [p.name, p]));
    assert.equal(params.start_date.required, true);
    assert.equal(params.limit.required, false);
    assert.equal(params.limit.schema.type, 'integer');
    assert.equal(params.limit.schema.maximum, 100);
    assert.deepEqual(params.meal_type.schema.enum, ['breakfast', 'lunch', 'dinner', 'snack']);
    const create = doc.components.schemas.MealCreate;
    assert.deepEqual(create.required.sort(), ['meal_type', 'timestamp']);
    assert.equal(create.additionalProperties, false);
    assert.equal(create.properties.macros.properties.calories.maximum, 10000);
    assert.ok(doc.components.schemas.Meal.properties.macros);
    assert.ok(doc.components.schemas.Error);
    assert.deepEqual(list['x-required-scopes'], ['nutrition:read']);
  });

  test('meal versions: ETag on answers, If-Match on PATCH and DELETE, 412 when stale', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    const meal = doc.paths['/v1/nutrition/meals/{id}'];
    assert.ok(meal.get.responses['200'].headers.ETag);
    assert.ok(doc.paths['/v1/nutrition/meals'].post.responses['201'].headers.ETag);
    for (const op of [meal.patch, meal.delete]) {
      const ifMatch = op.parameters.find((p: any) => p.name === 'If-Match');
      assert.deepEqual([ifMatch.in, ifMatch.required], ['header', false]);
      assert.ok(op.responses['412']);
    }
    assert.ok(meal.patch.responses['200'].headers.ETag);
  });
});
