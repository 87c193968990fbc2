import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { EventRecord } from '../../server/events/bus.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';
import { httpClient, TOOL_TABLE } from './helpers.js';

const WRITE_TOOLS = ['log_meal', 'update_meal', 'delete_meal', 'log_saved_meal', 'log_sleep'];

function textOf(r: CallToolResult): string {
  return (r.content[0] as { text: string }).text;
}

describe('MCP over Streamable HTTP (/mcp)', () => {
  let t: TestService;
  let admin: Client;
  const events: EventRecord[] = [];
  before(async () => {
    t = await startTestService();
    t.service.app.bus.subscribe((e) => events.push(e));
    admin = await httpClient(t.baseUrl, t.adminKey);
  });
  after(async () => {
    await admin.close();
    await t.stop();
  });

  const mealCount = async () => (await t.request('GET', '/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-12-31&limit=100')).body.data.length as number;

  test('speaks a current protocol (2025-06-18 or later) as the server "chyme"', () => {
    assert.equal(admin.getServerVersion()?.name, 'chyme');
    assert.ok(admin.getServerCapabilities()?.tools);
    assert.equal(admin.getServerCapabilities()?.resources?.subscribe, true);
    const version = (admin.transport as { protocolVersion?: string }).protocolVersion;
    assert.ok(version && version >= '2025-06-18', `negotiated ${version}`);
  });

  test('lists exactly the tools of the table, each with input and output schemas and truthful annotations', async () => {
    const { tools } = await admin.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), Object.keys(TOOL_TABLE).sort());
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok(tool.description?.includes(TOOL_TABLE[tool.name]!), `${tool.name} names its scope`);
      const a = tool.annotations!;
      const writes = WRITE_TOOLS.includes(tool.name);
      assert.equal(a.readOnlyHint, !writes, tool.name);
      assert.equal(a.openWorldHint, false, tool.name);
      if (!writes) assert.equal(a.idempotentHint, true, tool.name);
      if (tool.name === 'delete_meal') assert.equal(a.destructiveHint, true);
      if (['log_meal', 'log_saved_meal', 'log_sleep'].includes(tool.name)) {
        assert.equal(a.destructiveHint, false, tool.name);
        assert.equal(a.idempotentHint, false, tool.name);
      }
      // Writes take an idempotency key; no schema leans on a $ref a client might not follow.
      assert.equal('idempotency_key' in ((tool.inputSchema.properties ?? {}) as object), writes, tool.name);
      assert.doesNotMatch(JSON.stringify(tool), /\$ref|\$defs/);
    }
  });

  test('logs a meal from foods of the table and REST reads back the same meal; webhooks and listeners see meal.created', async () => {
    const sub = await t.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['meal.created'] } });
    assert.equal(sub.status, 201);
    const found = await admin.callTool({ name: 'search_foods', arguments: { query: 'banana', limit: 3 } });
    assert.equal(found.isError, undefined);
    const banana = (found.structuredContent as { data: Array<{ id: string; name: string; portions: Array<{ id: string }>; per_portion: Array<{ calories: number; unit: string }> }> }).data[0]!;
    assert.match(banana.name, /banana/i);
    assert.equal(banana.per_portion.length, banana.portions.length);
    const logged = await admin.callTool({
      name: 'log_meal',
      arguments: { timestamp: '2026-11-22T12:30:00+01:00', foods: [{ food_id: banana.id, quantity: 1, unit: banana.portions[0]!.id }, { name: 'coffee', calories: 5 }] },
    });
    assert.equal(logged.isError, undefined, textOf(logged as CallToolResult));
    const meal = logged.structuredContent as { id: string; meal_type: string; macros: { calories: number }; foods: unknown[] };
    assert.equal(meal.meal_type, 'lunch', 'the meal type comes from the local time of day');
    assert.equal(meal.macros.calories, banana.per_portion[0]!.calories + 5);
    assert.match(textOf(logged as CallToolResult), new RegExp(meal.id));
    const rest = await t.request('GET', `/v1/nutrition/meals/${meal.id}`);
    assert.equal(rest.status, 200);
    assert.deepEqual(rest.body, meal);
    assert.ok(events.some((e) => e.type === 'meal.created' && (e.data.object as { id: string }).id === meal.id));
    // The delivery was queued in the meal's own transaction, with the meal in its body.
    const queued = t.service.app.db.prepare('SELECT event_type, body FROM webhook_deliveries WHERE subscription_id = ?').all(sub.body.id) as Array<{ event_type: string; body: string }>;
    assert.ok(queued.some((d) => d.event_type === 'meal.created' && d.body.includes(meal.id)));
    await t.request('DELETE', `/v1/webhooks/${sub.body.id}`);
  });

  test('an assistant logs "2 eggs" as two eggs (~143 kcal), the meal says it came through MCP, and moving it re-guesses its type', async () => {
    const found = await admin.callTool({ name: 'search_foods', arguments: { query: 'egg', limit: 3 } });
    const egg = (found.structuredContent as { data: Array<{ id: string; portions: Array<{ id: string; label: string }>; per_portion: Array<{ calories: number; unit: string }> }> }).data[0]!;
    assert.equal(egg.id, 'food_usda_01123');
    assert.equal(egg.portions[0]!.label, '1 large', 'the natural unit first');
    assert.equal(egg.per_portion[0]!.unit, egg.portions[0]!.id);
    assert.match(textOf(found as CallToolResult), /portions 4 = 1 large \(50 g\)/);
    const logged = await admin.callTool({ name: 'log_meal', arguments: { timestamp: '2026-11-22T08:00:00+01:00', foods: [{ food_id: egg.id, quantity: 2 }] } });
    assert.equal(logged.isError, undefined, textOf(logged as CallToolResult));
    const meal = logged.structuredContent as { id: string; meal_type: string; source: string; macros: { calories: number }; foods: Array<{ unit: string; grams: number }> };
    assert.deepEqual([meal.macros.calories, meal.foods[0]!.unit, meal.foods[0]!.grams, meal.meal_type, meal.source], [143, '4', 100, 'breakfast', 'mcp']);
    // Its type was guessed from 08:00: moved to 13:00 it is lunch; once a type is given, it stays.
    const moved = await admin.callTool({ name: 'update_meal', arguments: { meal_id: meal.id, timestamp: '2026-11-22T13:00:00+01:00' } });
    assert.equal((moved.structuredContent as { meal_type: string }).meal_type, 'lunch');
    await admin.callTool({ name: 'update_meal', arguments: { meal_id: meal.id, meal_type: 'snack' } });
    const kept = await admin.callTool({ name: 'update_meal', arguments: { meal_id: meal.id, timestamp: '2026-11-22T08:30:00+01:00' } });
    assert.equal((kept.structuredContent as { meal_type: string }).meal_type, 'snack');
    // A type given when logging is the person's: moving the meal keeps it.
    const typed = await admin.callTool({ name: 'log_meal', arguments: { timestamp: '2026-11-22T08:00:00+01:00', meal_type: 'breakfast', description: 'toast' } });
    const typedId = (typed.structuredContent as { id: string }).id;
    const typedMoved = await t.request('PATCH', `/v1/nutrition/meals/${typedId}`, { body: { timestamp: '2026-11-22T19:00:00+01:00' } });
    assert.equal(typedMoved.body.meal_type, 'breakfast');
    // A saved meal without a type, logged by an assistant: the time's type, source mcp.
    const saved = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Eggs on toast', foods: [{ food_id: egg.id, quantity: 2 }] } });
    assert.equal(saved.status, 201, saved.text);
    const fromSaved = await admin.callTool({ name: 'log_saved_meal', arguments: { name: 'eggs on toast', timestamp: '2026-11-22T19:00:00+01:00' } });
    assert.deepEqual(
      [(fromSaved.structuredContent as { meal_type: string }).meal_type, (fromSaved.structuredContent as { source: string }).source, (fromSaved.structuredContent as { macros: { calories: number } }).macros.calories],
      ['dinner', 'mcp', 143],
    );
    // Over REST the same saved meal still needs a type (a form can ask for one).
    assert.equal((await t.request('POST', `/v1/nutrition/saved_meals/${saved.body.id}/log`, { body: { timestamp: '2026-11-22T19:00:00+01:00' } })).status, 400);
    for (const id of [meal.id, typedId, (fromSaved.structuredContent as { id: string }).id]) await t.request('DELETE', `/v1/nutrition/meals/${id}`);
    await t.request('DELETE', `/v1/nutrition/saved_meals/${saved.body.id}`);
  });

  test('a write with an idempotency key, retried, returns the first answer and writes once; other arguments with it are refused', async () => {
    const before = await mealCount();
    const args = { description: 'toast', macros: { calories: 180 }, timestamp: '2026-11-22T07:45:00Z', idempotency_key: 'retry-1' };
    const first = await admin.callTool({ name: 'log_meal', arguments: args });
    const second = await admin.callTool({ name: 'log_meal', arguments: args });
    assert.deepEqual(second.structuredContent, first.structuredContent);
    assert.equal(await mealCount(), before + 1);
    const clash = await admin.callTool({ name: 'log_meal', arguments: { ...args, macros: { calories: 200 } } });
    assert.equal(clash.isError, true);
    assert.match(textOf(clash as CallToolResult), /idempotency_conflict \(field: idempotency_key\)/);
    assert.equal(await mealCount(), before + 1);
  });

  test('update, list and delete a meal by id; a missing id is a tool error naming meal_id', async () => {
    const logged = await admin.callTool({ name: 'log_meal', arguments: { description: 'soup', macros: { calories: 300 }, meal_type: 'dinner', timestamp: '2026-11-21T18:00:00Z' } });
    const id = (logged.structuredContent as { id: string }).id;
    const updated = await admin.callTool({ name: 'update_meal', arguments: { meal_id: id, macros: { calories: 350 } } });
    assert.equal((updated.structuredContent as { macros: { calories: number } }).macros.calories, 350);
    const listed = await admin.callTool({ name: 'list_meals', arguments: { start_date: '2026-11-21', end_date: '2026-11-21' } });
    assert.ok((listed.structuredContent as { data: Array<{ id: string }> }).data.some((m) => m.id === id));
    const deleted = await admin.callTool({ name: 'delete_meal', arguments: { meal_id: id } });
    assert.deepEqual(deleted.structuredContent, { id, object: 'nutrition.meal', deleted: true });
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${id}`)).status, 404);
    const again = await admin.callTool({ name: 'delete_meal', arguments: { meal_id: id } });
    assert.equal(again.isError, true);
    assert.match(textOf(again as CallToolResult), /resource_missing \(field: meal_id\)/);
  });

  test('saved meals are listed and logged by name; sleep is logged', async () => {
    const saved = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Usual breakfast', meal_type: 'breakfast', foods: [{ name: 'porridge', calories: 350 }] } });
    assert.equal(saved.status, 201);
    const list = await admin.callTool({ name: 'list_saved_meals', arguments: {} });
    assert.equal((list.structuredContent as { data: Array<{ id: string }> }).data[0]!.id, saved.body.id);
    const logged = await admin.callTool({ name: 'log_saved_meal', arguments: { name: 'usual BREAKFAST', timestamp: '2026-11-22T07:00:00Z' } });
    assert.equal(logged.isError, undefined, textOf(logged as CallToolResult));
    assert.equal((logged.structuredContent as { meal_type: string; macros: { calories: number } }).meal_type, 'breakfast');
    const neither = await admin.callTool({ name: 'log_saved_meal', arguments: {} });
    assert.match(textOf(neither as CallToolResult), /field: saved_meal_id/);
    const sleep = await admin.callTool({ name: 'log_sleep', arguments: { start: '2026-11-21T22:30:00Z', end: '2026-11-22T06:30:00Z' } });
    assert.equal(sleep.isError, undefined, textOf(sleep as CallToolResult));
    assert.equal((sleep.structuredContent as { duration_min: number }).duration_min, 480);
    const overlap = await admin.callTool({ name: 'log_sleep', arguments: { start: '2026-11-21T23:30:00Z', end: '2026-11-22T05:30:00Z' } });
    assert.equal(overlap.isError, true);
  });

  test('get_digestive_state answers what GET /v1/digestion/state answers; scores and the snapshot carry the REST resources', async () => {
    const tool = await admin.callTool({ name: 'get_digestive_state', arguments: {} });
    const rest = await t.request('GET', '/v1/digestion/state');
    assert.deepEqual(tool.structuredContent, rest.body);
    const scores = await admin.callTool({ name: 'get_daily_scores', arguments: { start_date: '2026-11-20', end_date: '2026-11-22' } });
    const restScores = await t.request('GET', '/v1/digestion/scores/daily?start_date=2026-11-20&end_date=2026-11-22');
    assert.deepEqual(scores.structuredContent, restScores.body);
    for (const s of (scores.structuredContent as { data: Array<{ components: object }> }).data) {
      assert.deepEqual(Object.keys(s.components).sort(), ['circadian', 'fasted_ratio', 'overnight', 'regularity']);
    }
    const snap = await admin.callTool({ name: 'get_snapshot', arguments: { days: 3 } });
    const restSnap = await t.request('GET', '/v1/snapshot?days=3');
    assert.deepEqual(snap.structuredContent, restSnap.body);
  });

  test('a read-only key sees no write tools, and calling one is a tool error naming the missing scope', async () => {
    const reader = await httpClient(t.baseUrl, t.keyWith('nutrition:read', 'digestion:read'));
    try {
      const names = (await reader.listTools()).tools.map((x) => x.name).sort();
      assert.deepEqual(names, Object.keys(TOOL_TABLE).filter((n) => !WRITE_TOOLS.includes(n)).sort());
      const before = await mealCount();
      const refused = await reader.callTool({ name: 'log_meal', arguments: { description: 'x', macros: { calories: 10 } } });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused as CallToolResult), /insufficient_scope.*"nutrition:write"/);
      assert.equal(await mealCount(), before);
    } finally {
      await reader.close();
    }
    const noNutrition = await httpClient(t.baseUrl, t.keyWith('digestion:read'));
    try {
      // The snapshot holds what the key may read by default; asking for meals names the scope.
      const snap = await noNutrition.callTool({ name: 'get_snapshot', arguments: { days: 1 } });
      assert.equal((snap.structuredContent as { nutrition: object }).nutrition.hasOwnProperty('meals'), false);
      const meals = await noNutrition.callTool({ name: 'get_snapshot', arguments: { include: ['meals'] } });
      assert.match(textOf(meals as CallToolResult), /"nutrition:read"/);
      assert.deepEqual((await noNutrition.listResources()).resources.map((r) => r.uri), ['chyme://digestion/state']);
    } finally {
      await noNutrition.close();
    }
  });

  test('100 calls with wrong input: 100 tool errors naming a field, 0 protocol errors, 0 writes', async () => {
    const before = await mealCount();
    const eventsBefore = events.length;
    const wrong: Array<{ name: string; arguments: Record<string, unknown>; field: string }> = [
      { name: 'log_meal', arguments: { macros: { calories: -5 } }, field: 'macros.calories' },
      { name: 'log_meal', arguments: { description: 'x', meal_type: 'brunch' }, field: 'meal_type' },
      { name: 'log_meal', arguments: { description: 'x', timestamp: 'yesterday' }, field: 'timestamp' },
      { name: 'log_meal', arguments: { foods: [{ food_id: 'food_usda_09040', quantity: 0, unit: 'g' }] }, field: 'foods.0.quantity' },
      { name: 'log_meal', arguments: { foods: [{ food_id: 'food_nope', quantity: 1, unit: 'g' }] }, field: 'foods.0.food_id' },
      { name: 'log_meal', arguments: { foods: [{ name: 'x' }] }, field: 'foods.0.calories' },
      { name: 'log_meal', arguments: { description: 'x', colour: 'red' }, field: 'colour' },
      { name: 'log_meal', arguments: { description: 'x', timestamp: '2030-01-01T00:00:00Z' }, field: 'timestamp' },
      { name: 'log_meal', arguments: {}, field: 'foods' },
      { name: 'update_meal', arguments: { macros: { calories: 1 } }, field: 'meal_id' },
      { name: 'update_meal', arguments: { meal_id: 'meal_nope', macros: { calories: 1 } }, field: 'meal_id' },
      { name: 'delete_meal', arguments: { meal_id: 42 }, field: 'meal_id' },
      { name: 'list_meals', arguments: { start_date: '2026-02-30' }, field: 'start_date' },
      { name: 'list_meals', arguments: { end_date: '2026-11-01' }, field: 'start_date' },
      { name: 'list_meals', arguments: { start_date: '2026-11-10', end_date: '2026-11-01' }, field: 'end_date' },
      { name: 'list_meals', arguments: { limit: 1000 }, field: 'limit' },
      { name: 'search_foods', arguments: { query: '' }, field: 'query' },
      { name: 'search_foods', arguments: {}, field: 'query' },
      { name: 'log_saved_meal', arguments: { saved_meal_id: 'smeal_nope' }, field: 'saved_meal_id' },
      { name: 'log_sleep', arguments: { start: '2026-11-22T06:00:00Z', end: '2026-11-21T22:00:00Z' }, field: 'end' },
      { name: 'get_daily_scores', arguments: { start_date: '2020-01-01', end_date: '2026-01-01' }, field: 'end_date' },
      { name: 'get_snapshot', arguments: { days: 0 }, field: 'days' },
      { name: 'get_snapshot', arguments: { include: ['everything'] }, field: 'include.0' },
      { name: 'get_digestive_state', arguments: { verbose: true }, field: 'verbose' },
      { name: 'log_meal', arguments: { description: 'x', macros: { calories: 5000 }, foods: 'none' }, field: 'foods' },
    ];
    let protocolErrors = 0;
    for (let i = 0; i < 100; i++) {
      const call = wrong[i % wrong.length]!;
      try {
        const r = (await admin.callTool({ name: call.name, arguments: call.arguments })) as CallToolResult;
        assert.equal(r.isError, true, `${call.name} ${JSON.stringify(call.arguments)}: ${textOf(r)}`);
        assert.ok(textOf(r).includes(`(field: ${call.field})`), `${call.name} ${JSON.stringify(call.arguments)} names ${call.field}: ${textOf(r)}`);
      } catch (err) {
        if (err instanceof assert.AssertionError) throw err;
        protocolErrors++;
      }
    }
    assert.equal(protocolErrors, 0);
    assert.equal(await mealCount(), before);
    assert.equal(events.length, eventsBefore, 'nothing was written, so nothing was announced');
  });

  test('resources: today\'s meals and the live state read as REST does, and a subscriber hears of a meal written over REST', async () => {
    const today = await admin.readResource({ uri: 'chyme://meals/today' });
    const rest = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-22&end_date=2026-11-22&limit=100');
    assert.deepEqual(JSON.parse((today.contents[0] as { text: string }).text), rest.body);
    const updated: string[] = [];
    let heard: () => void = () => {};
    const twoHeard = new Promise<void>((resolve) => (heard = resolve));
    admin.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
      if (updated.includes('chyme://meals/today') && updated.includes('chyme://digestion/state')) heard();
    });
    await admin.subscribeResource({ uri: 'chyme://meals/today' });
    await admin.subscribeResource({ uri: 'chyme://digestion/state' });
    const created = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: new Date(TEST_NOW).toISOString(), meal_type: 'snack', macros: { calories: 90 } } });
    assert.equal(created.status, 201);
    await twoHeard;
    const after = await admin.readResource({ uri: 'chyme://meals/today' });
    assert.ok((after.contents[0] as { text: string }).text.includes(created.body.id));
    await admin.unsubscribeResource({ uri: 'chyme://meals/today' });
  });

  test('the daily_review prompt carries today\'s data the key may read', async () => {
    const { prompts } = await admin.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ['daily_review']);
    const review = await admin.getPrompt({ name: 'daily_review', arguments: {} });
    assert.match((review.messages[0]!.content as { text: string }).text, /2026-11-22/);
    assert.deepEqual(review.messages.slice(1).map((m) => (m.content as { resource: { uri: string } }).resource.uri).sort(), ['chyme://digestion/state', 'chyme://meals/today']);
  });

  test('GET /v1/mcp says where an assistant reaches the service: the /mcp URL and the chyme mcp command', async () => {
    const r = await t.request('GET', '/v1/mcp', { key: t.keyWith('nutrition:read') });
    assert.equal(r.status, 200);
    assert.equal(r.body.object, 'mcp_server');
    assert.equal(r.body.url, `${t.baseUrl}/mcp`);
    assert.deepEqual(r.body.stdio.args.slice(1), ['mcp', '--url', t.baseUrl]);
    assert.match(r.body.stdio.args[0], /build\/server\/cli\/main\.js$/);
    assert.ok(r.body.protocol_versions.includes('2025-06-18'));
    assert.equal((await t.request('GET', '/v1/mcp', { key: null })).status, 401);
  });

  test('/mcp refuses a foreign Origin (403), a missing key (401), and a session used with another key (404)', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const foreign = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${t.adminKey}`, origin: 'http://evil.example' }, body: JSON.stringify(init) });
    assert.equal(foreign.status, 403);
    // fetch will not send another Host; node:http will (DNS rebinding: a page's host resolved to 127.0.0.1).
    const rebinding = await new Promise<number>((resolve, reject) => {
      const url = new URL(t.baseUrl);
      const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/mcp', headers: { ...headers, authorization: `Bearer ${t.adminKey}`, host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    assert.equal(rebinding, 403);
    const anonymous = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    assert.equal(anonymous.status, 401);
    const opened = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${t.adminKey}` }, body: JSON.stringify(init) });
    assert.equal(opened.status, 200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    assert.ok(sessionId);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const stolen = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${t.keyWith('nutrition:read')}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(list),
    });
    assert.equal(stolen.status, 404);
    // What the direct path does not take, the SDK's transport answers as the specification says.
    const inSession = { ...headers, authorization: `Bearer ${t.adminKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const jsonOnly = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...inSession, accept: 'application/json' }, body: JSON.stringify(list) });
    assert.equal(jsonOnly.status, 406);
    const oldVersion = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...inSession, 'mcp-protocol-version': '1999-01-01' }, body: JSON.stringify(list) });
    assert.equal(oldVersion.status, 400);
    const direct = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify(list) });
    assert.equal(direct.status, 200);
    assert.equal(direct.headers.get('mcp-session-id'), sessionId);
    assert.equal(((await direct.json()) as { id: number; result: { tools: unknown[] } }).result.tools.length, Object.keys(TOOL_TABLE).length);
    const notJson = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: inSession, body: '{"jsonrpc":' });
    assert.equal(notJson.status, 400);
    // An initialize the transport refuses (406: no text/event-stream) leaves no session listening behind.
    const listeners = () => (t.service.app.bus as unknown as { listeners: Set<unknown> }).listeners.size;
    const before = listeners();
    const refused = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, accept: 'application/json', authorization: `Bearer ${t.adminKey}` }, body: JSON.stringify(init) });
    assert.equal(refused.status, 406);
    assert.equal(listeners(), before);
    const ended = await fetch(`${t.baseUrl}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${t.adminKey}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } });
    assert.equal(ended.status, 200);
  });
});

describe('/mcp and the rate limit', () => {
  test('MCP requests count against the key\'s rate limit like /v1 requests (429 past the burst)', async () => {
    const t = await startTestService({ rateLimit: { perSecond: 0.001, burst: 3 } });
    try {
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${t.adminKey}` };
      const post = (body: unknown, extra: Record<string, string> = {}) => fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) });
      const opened = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      assert.equal(opened.status, 200);
      const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_digestive_state', arguments: {} } };
      assert.equal((await post(call, session)).status, 200);
      assert.equal((await t.request('GET', '/v1/digestion/state')).status, 200, 'REST and MCP share the bucket');
      const limited = await post({ ...call, id: 3 }, session);
      assert.equal(limited.status, 429);
      assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limited');
    } finally {
      await t.stop();
    }
  });
});

describe('MCP edges: resource templates, arguments that are not an object, revoked keys', () => {
  // A heartbeat far beyond the test: a stream that ends did so because its key was revoked.
  let t: TestService;
  before(async () => {
    t = await startTestService({ webhooks: { heartbeatMs: 600_000 } });
  });
  after(() => t.stop());

  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };

  /** Opens a session by hand; the headers every later request of it carries. */
  async function session(key: string): Promise<Record<string, string>> {
    const opened = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${key}` }, body: JSON.stringify(init) });
    assert.equal(opened.status, 200);
    const inSession = { ...headers, authorization: `Bearer ${key}`, 'mcp-session-id': opened.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    return inSession;
  }

  /** A streaming GET whose end is recorded. */
  async function stream(url: string, requestHeaders: Record<string, string>): Promise<{ ended: () => boolean; abort: () => void }> {
    const controller = new AbortController();
    const res = await fetch(url, { headers: requestHeaders, signal: controller.signal });
    assert.equal(res.status, 200, url);
    let ended = false;
    void (async () => {
      try {
        for await (const _ of res.body as unknown as AsyncIterable<Uint8Array>);
      } catch {
        // aborted
      }
      ended = true;
    })();
    return { ended: () => ended, abort: () => controller.abort() };
  }

  test('resources/templates/list answers an empty list (the resources capability is advertised)', async () => {
    const client = await httpClient(t.baseUrl, t.adminKey);
    assert.deepEqual(await client.listResourceTemplates(), { resourceTemplates: [] });
    await client.close();
  });

  test('tools/call with arguments that are not an object: -32602 and one sentence, no schema dump', async () => {
    const inSession = await session(t.adminKey);
    for (const [n, args] of [[2, 'banana'], [3, ['banana']], [4, 5], [5, null]] as const) {
      const request = { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'search_foods', arguments: args } };
      // One request alone takes the endpoint's direct path; a batch of one goes through the SDK's transport.
      for (const body of [request, [request]]) {
        const r = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify(body) });
        const text = await r.text();
        const answer = JSON.parse(text.startsWith('event:') || text.startsWith('data:') ? text.slice(text.indexOf('data: ') + 6).split('\n')[0]! : text) as unknown;
        const { id, error } = (Array.isArray(answer) ? answer[0] : answer) as { id: number; error?: { code: number; message: string } };
        assert.equal(id, n);
        assert.equal(error?.code, -32602, text);
        assert.match(error!.message, /^tools\/call arguments must be an object/);
        assert.doesNotMatch(error!.message.replace('{"query": "banana"}', ''), /[[{]/, 'a sentence, not a schema dump');
      }
    }
  });

  test('revoking a key closes its MCP notification streams and its /v1/events/stream', async () => {
    const created = await t.request('POST', '/v1/api_keys', { body: { name: 'streams', scopes: ['nutrition:read'] } });
    const key = created.body.secret as string;
    const inSession = await session(key);
    const mcp = await stream(`${t.baseUrl}/mcp`, { ...inSession, accept: 'text/event-stream' });
    const events = await stream(`${t.baseUrl}/v1/events/stream`, { authorization: `Bearer ${key}`, accept: 'text/event-stream' });
    assert.equal((await t.request('DELETE', `/v1/api_keys/${created.body.id}`)).status, 200);
    // The watch looks every 250 ms; the bound only ends the wait for a failure (a busy machine may be slow).
    const start = Date.now();
    while ((!mcp.ended() || !events.ended()) && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 20));
    assert.ok(mcp.ended(), 'the MCP GET stream ended');
    assert.ok(events.ended(), 'the event stream ended');
    const again = await fetch(`${t.baseUrl}/mcp`, { method: 'POST', headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) });
    assert.equal(again.status, 401);
  });
});
