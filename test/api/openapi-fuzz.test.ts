import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { errorOf, startTestService, type HttpReply, type TestService } from '../helpers/service.js';
import { SCOPES, type Scope } from '../../server/auth/scopes.js';
import { arbitraryFor, durationMs, isUri, resolve, type JsonSchema, type SchemaContext } from '../helpers/schema-arbitrary.js';
import { encodePairingCode } from '../../server/sync/index.js';

/**
 * Issue #10 item 6: the OpenAPI document says what the server enforces. For every operation that
 * takes input, requests are generated from /v1/openapi.json alone (parameters, bodies,
 * x-dependent-required) and sent to the real server; none of them may be refused with a 400.
 * Then each rule the document used to leave out is removed from a copy of the document, and the
 * fuzzer must find a request the server refuses: so this test would have caught each gap.
 */

type Doc = Record<string, any>;

interface Operation {
  method: string;
  path: string;
  op: Doc;
}

interface Refusal {
  request: string;
  status: number;
  param: string | undefined;
  message: string;
}

/**
 * Rules between fields that JSON Schema cannot state, each written in the operation's description
 * or CONTRACT §3; the fuzzer keeps to them (each is checked by the API tests of its feature).
 */
const DAY_MS = 24 * 3600_000;

/**
 * Sleep: "end must be after start, at most 24 hours later". Two instants drawn apart almost never
 * satisfy it, so the generated pair is moved (not filtered): the span is kept in (0, 24 h] and,
 * when the document bounds end (x-max-future), the pair is moved back under that bound.
 */
function sleepWithinOneDay(body: any, endSchema: JsonSchema, nowMs: number): any {
  const startMs = Date.parse(body.start);
  const span = 60_000 + (Math.abs(Date.parse(body.end) - startMs) % (DAY_MS - 60_000));
  let end = startMs + span;
  if (endSchema['x-max-future']) end = Math.min(end, nowMs + durationMs(endSchema['x-max-future']));
  return { ...body, start: new Date(end - span).toISOString(), end: new Date(end).toISOString() };
}

function withinDocumentedProse(op: Doc, query: Record<string, string>, body: any): boolean {
  // CONTRACT §3: end_date < start_date is a 400; day series and timelines span at most 366 days.
  if (query.start_date && query.end_date) {
    if (query.end_date < query.start_date) return false;
    if ((Date.parse(query.end_date) - Date.parse(query.start_date)) / DAY_MS + 1 > 366) return false;
  }
  // Food entries (meals, saved meals): {name, calories} or {food_id, quantity, unit}, which the
  // document states in prose only; the fuzzer sends the first form.
  for (const entry of Array.isArray(body?.foods) ? body.foods : []) {
    if (entry?.name === undefined || entry?.calories === undefined || entry?.food_id !== undefined) return false;
  }
  // Meals: calories, typed or derived (sum of foods, else 4/4/9 per gram), at most 10000.
  if ((op.operationId === 'createMeal' || op.operationId === 'updateMeal') && body) {
    const foods: any[] = body.foods ?? [];
    const m = body.macros ?? {};
    const derived = foods.length ? foods.reduce((s, f) => s + f.calories, 0) : 4 * (m.protein_g ?? 0) + 4 * (m.carbs_g ?? 0) + 9 * (m.fat_g ?? 0);
    if (m.calories == null && derived > 10_000) return false;
  }
  // MQTT (the fields' descriptions): enabling, and testing, need a broker; a pin needs mqtts://;
  // the two prefixes differ. Judged against the defaults, which the fuzzer restores before each.
  if ((op.operationId === 'updateMqtt' || op.operationId === 'testMqtt') && body) {
    const broker = typeof body.broker_url === 'string' ? body.broker_url : null;
    if ((body.enabled === true || op.operationId === 'testMqtt') && !broker) return false;
    if (typeof body.tls_certificate_sha256 === 'string' && !broker?.startsWith('mqtts:')) return false;
    if ((body.discovery_prefix ?? MQTT_DEFAULTS.discovery_prefix) === (body.topic_prefix ?? MQTT_DEFAULTS.topic_prefix)) return false;
  }
  return true;
}

const MQTT_DEFAULTS = { enabled: false, broker_url: null, tls_certificate_sha256: null, discovery_prefix: 'homeassistant', topic_prefix: 'chyme' };

/**
 * A fuzzed broker URL points at 127.0.0.1:1 (nothing listens: refused at once), keeping its scheme,
 * so no connection attempt ever leaves this machine.
 */
function brokerOnLoopback(body: any): any {
  if (typeof body?.broker_url !== 'string') return body;
  const scheme = /^(mqtts?|wss?):/.exec(body.broker_url)?.[1] ?? 'mqtt';
  return { ...body, broker_url: `${scheme}://127.0.0.1:1` };
}

/**
 * Sync set-up and join name a relay: it is 127.0.0.1:1 here (refused at once), so no connection
 * leaves this machine and each answer is a prompt 502. A pairing code's inside is stated in prose
 * (the code another device shows), so join gets a well-formed code for such a relay.
 */
const LOOPBACK_PAIRING_CODE = encodePairingCode({ relay: 'ws://127.0.0.1:1', secret: new Uint8Array(16).fill(7) });
function syncOnLoopback(operationId: string | undefined, body: any): any {
  if (operationId === 'setupSync' && typeof body?.relay === 'string') return { ...body, relay: 'ws://127.0.0.1:1' };
  if (operationId === 'joinSync' && body) return { ...body, pairing_code: LOOPBACK_PAIRING_CODE };
  return body;
}

/** Per 100 g limits a food's per_serving values must keep once converted (the per_serving description). */
const PER_100G_LIMITS: Record<string, number> = { calories: 1000, fiber_g: 100, sugars_g: 100 };
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Foods: "protein_g + carbs_g + fat_g at most 105 per 100 g" and "per_serving values, per 100 g,
 * keep the limits of nutrients" are rules between fields, stated in the schema's descriptions.
 * Drawn values almost never keep them, so they are scaled down (not filtered) until they do.
 */
function foodWithinDocumentedProse(body: any): any {
  if (!body || typeof body !== 'object') return body;
  const scaleMacros = (n: any, per100: (x: number) => number) => {
    const sum = ['protein_g', 'carbs_g', 'fat_g'].reduce((s, k) => s + (typeof n[k] === 'number' ? round3(per100(n[k])) : 0), 0);
    if (sum <= 105) return n;
    const factor = Number.isFinite(sum) ? 90 / sum : 0;
    const out = { ...n };
    for (const k of ['protein_g', 'carbs_g', 'fat_g']) if (typeof out[k] === 'number') out[k] *= factor;
    return out;
  };
  const out = { ...body };
  if (out.nutrients) out.nutrients = scaleMacros(out.nutrients, (x) => x);
  if (out.per_serving) {
    const { grams } = out.per_serving;
    const per100 = (x: number) => (x * 100) / grams;
    const n = { ...out.per_serving.nutrients };
    for (const [k, limit] of Object.entries(PER_100G_LIMITS)) {
      if (typeof n[k] === 'number' && round3(per100(n[k])) > limit) n[k] = (0.9 * limit * grams) / 100;
    }
    out.per_serving = { grams, nutrients: scaleMacros(n, per100) };
  }
  return out;
}

/**
 * Backup settings: the folder must be one the service can create and write, a fact of this machine
 * (said in the field's description), and the tests run as any user, even root. So each absolute
 * folder drawn is moved under a temporary folder (which keeps it absolute); a `..` segment, which
 * would lead out of it, is not drawn. A relative path is left as it is (the document refuses it).
 */
const ABSOLUTE_ROOT = process.platform === 'win32' ? /^(?:[A-Za-z]:)?[\\/]/ : /^\//;
function backupFolderWithinMachine(body: any, root: string): any {
  if (typeof body?.folder !== 'string' || !ABSOLUTE_ROOT.test(body.folder)) return body;
  return { ...body, folder: join(root, body.folder.replace(ABSOLUTE_ROOT, '')) };
}

/**
 * Operations whose input is fuzzed: every one that takes parameters or a JSON body, except
 * - deletions, which take only an id and would remove the objects the other operations name:
 *   they are fuzzed last, by the final test;
 * - POST /v1/import, whose document holds whole records with the rules between them (sleep end
 *   after start, no overlaps, ids unique) that only prose states; the import tests cover those;
 * - POST /v1/imports, a multipart upload whose file must be an export of a supported app (no
 *   schema can generate one); its fields' rules (source, timezone, dry_run) are in the document
 *   and test/api/imports.test.ts checks each refusal.
 */
function fuzzedOperations(doc: Doc, deletions = false): Operation[] {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries<Doc>(doc.paths)) {
    for (const [method, op] of Object.entries<Doc>(ops)) {
      if ((method === 'delete') !== deletions || op.operationId === 'importAll') continue;
      if (op.requestBody && !op.requestBody.content?.['application/json']) continue;
      if (!op.parameters?.length && !op.requestBody) continue;
      out.push({ method: method.toUpperCase(), path, op });
    }
  }
  return out;
}

describe('OpenAPI document vs server: a schema-driven fuzzer', () => {
  let t: TestService;
  let doc: Doc;
  /** Existing ids by prefix: an id parameter names an object (CONTRACT §3: an unknown cursor is a 400). */
  const ids: Record<string, string[]> = {};
  /** Where the backup folders the fuzzer chooses are created. */
  let backupRoot: string;
  const FIXTURE_FOOD_NUTRIENTS = { calories: 100, protein_g: null, carbs_g: null, fat_g: null, fiber_g: null, sugars_g: null };

  before(async () => {
    t = await startTestService();
    backupRoot = mkdtempSync(join(tmpdir(), 'chyme-fuzz-backups-'));
    doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    const meal = await t.request('POST', '/v1/nutrition/meals', {
      body: { timestamp: '2026-11-22T08:00:00Z', meal_type: 'breakfast', macros: { calories: 400 } },
    });
    const sleep = await t.request('POST', '/v1/sleep/sessions', { body: { start: '2026-11-21T22:30:00Z', end: '2026-11-22T06:30:00Z' } });
    const sub = await t.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['meal.created'] } });
    const delivery = await t.request('POST', `/v1/webhooks/${sub.body.id}/test`);
    const food = await t.request('POST', '/v1/foods', { body: { name: 'Fuzz bar', nutrients: FIXTURE_FOOD_NUTRIENTS } });
    const saved = await t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Usual breakfast', foods: [{ name: 'Oats', calories: 300 }] } });
    const events = t.service.app.db.prepare('SELECT id FROM events').all() as Array<{ id: string }>;
    // A food of the shipped table: its id is of another shape than a custom food's.
    const tableFood = (await t.request('GET', '/v1/foods?query=apple&limit=1')).body.data[0];
    assert.equal(tableFood?.source, 'usda_sr');
    Object.assign(ids, {
      meal: [meal.body.id],
      sleep: [sleep.body.id],
      whsub: [sub.body.id],
      whdel: [delivery.body.webhook_delivery_id],
      evt: events.map((e) => e.id),
      food: [food.body.id, tableFood.id],
      smeal: [saved.body.id],
    });
    assert.ok(food.body.id && saved.body.id);
    assert.ok(ids.evt!.length > 0);
  });
  after(async () => {
    await t.stop();
    rmSync(backupRoot, { recursive: true, force: true });
  });

  const ctx = (): SchemaContext => ({ components: doc.components.schemas, nowMs: t.clock.now() });

  /** Keeps the fixtures' subscription only, so the documented limit of 50 is never what refuses a request. */
  async function removeNewSubscriptions(): Promise<void> {
    const list = await t.request('GET', '/v1/webhooks');
    for (const s of list.body.data) if (!ids.whsub!.includes(s.id)) await t.request('DELETE', `/v1/webhooks/${s.id}`);
  }

  /** An id-shaped parameter (its pattern names prefix_) takes an existing id of that kind. */
  function parameterArbitrary(p: Doc, d: Doc): fc.Arbitrary<string | undefined> {
    const schema = resolve(p.schema, { components: d.components.schemas, nowMs: 0 });
    const prefix = typeof schema.pattern === 'string' ? /([a-z]+)_\[/.exec(schema.pattern)?.[1] : undefined;
    let arb: fc.Arbitrary<string>;
    // A cursor names an existing object (CONTRACT §3); with none of its kind here, it is left out.
    if (prefix && prefix !== 'evt' && !ids[prefix]?.length && !p.required) return fc.constant(undefined);
    if (prefix && ids[prefix]?.length) {
      const known = fc.constantFrom(...ids[prefix]!);
      // last_event_id also takes sequence numbers: keep those, make evt_ ids real ones.
      arb = prefix === 'evt' ? arbitraryFor(schema, ctx()).chain((v) => (String(v).startsWith('evt_') ? known : fc.constant(String(v)))) : known;
    } else {
      arb = arbitraryFor(schema, ctx()).map((v) => String(v));
    }
    return p.required ? arb : fc.option(arb, { nil: undefined });
  }

  /** Sends generated requests for one operation; returns the first (shrunk) refusal, if any. */
  async function fuzz(d: Doc, { method, path, op }: Operation, numRuns = 60): Promise<Refusal | undefined> {
    const params: Doc[] = op.parameters ?? [];
    const pathArbs: Record<string, fc.Arbitrary<string | undefined>> = {};
    const queryArbs: Record<string, fc.Arbitrary<string | undefined>> = {};
    for (const p of params) (p.in === 'path' ? pathArbs : queryArbs)[p.name] = parameterArbitrary(p, d);
    const bodySchema = op.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined;
    const dependent: Record<string, string[]> = op['x-dependent-required'] ?? {};

    const request = fc
      .record({
        pathParams: fc.record(pathArbs),
        query: fc.record(queryArbs),
        body: bodySchema ? arbitraryFor(bodySchema, { components: d.components.schemas, nowMs: t.clock.now() }) : fc.constant(undefined),
      })
      .map((r) =>
        op.operationId === 'createSleepSession' ? { ...r, body: sleepWithinOneDay(r.body, d.components.schemas.SleepCreate.properties.end, t.clock.now()) } : r,
      )
      .map((r) => (op.operationId === 'createFood' || op.operationId === 'updateFood' ? { ...r, body: foodWithinDocumentedProse(r.body) } : r))
      .filter((r) => op.operationId !== 'updateBackupSettings' || typeof r.body?.folder !== 'string' || !r.body.folder.split(/[\\/]/).includes('..'))
      .map((r) => (op.operationId === 'updateBackupSettings' ? { ...r, body: backupFolderWithinMachine(r.body, backupRoot) } : r))
      .map((r) => ({ ...r, query: Object.fromEntries(Object.entries(r.query).filter(([, v]) => v !== undefined)) as Record<string, string> }))
      .filter((r) => Object.entries(dependent).every(([name, needs]) => r.query[name] === undefined || needs.every((n) => r.query[n] !== undefined)))
      .map((r) => (op.operationId === 'updateMqtt' || op.operationId === 'testMqtt' ? { ...r, body: brokerOnLoopback(r.body) } : r))
      .map((r) => ({ ...r, body: syncOnLoopback(op.operationId, r.body) }))
      .filter((r) => withinDocumentedProse(op, r.query, r.body));

    let refusal: Refusal | undefined;
    const result = await fc.check(
      fc.asyncProperty(request, async ({ pathParams, query, body }) => {
        const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(pathParams[name] ?? '')) + (Object.keys(query).length ? `?${new URLSearchParams(query)}` : '');
        let status: number;
        let reply: any;
        if (path === '/v1/events/stream') {
          // An endless stream: the status line is the answer.
          const abort = new AbortController();
          const res = await fetch(t.baseUrl + url, { headers: { authorization: `Bearer ${t.adminKey}` }, signal: abort.signal });
          status = res.status;
          reply = status === 200 ? undefined : await res.json();
          abort.abort();
        } else {
          // An edit merges nutrients with the food's current ones: start each from the fixture's.
          if (op.operationId === 'updateFood') await t.request('PATCH', `/v1/foods/${ids.food![0]}`, { body: { nutrients: FIXTURE_FOOD_NUTRIENTS } });
          // Logging needs a meal_type from the request or the saved meal (the description says so); an edit may have cleared it.
          if (op.operationId === 'logSavedMeal') await t.request('PATCH', `/v1/nutrition/saved_meals/${ids.smeal![0]}`, { body: { meal_type: 'breakfast' } });
          // The MQTT rules between fields are judged against the defaults (no broker stored).
          if (op.operationId === 'updateMqtt' || op.operationId === 'testMqtt') await t.request('PATCH', '/v1/integrations/mqtt', { body: MQTT_DEFAULTS });
          const res = await t.request(method, url, body === undefined ? {} : { body });
          status = res.status;
          reply = res.body;
          if (status < 300 && (op.operationId === 'createWebhook' || op.operationId === 'importAll')) await removeNewSubscriptions();
        }
        if (status !== 400) return true;
        refusal = { request: `${method} ${url} ${body === undefined ? '' : JSON.stringify(body)}`, status, param: reply?.error?.param, message: reply?.error?.message };
        return false;
      }),
      { numRuns, seed: 20261123 },
    );
    return result.failed ? refusal : undefined;
  }

  test('every request the document calls valid is accepted (no 400), for every operation that takes input', async () => {
    const operations = fuzzedOperations(doc);
    const covered = new Set(operations.map((o) => o.op.operationId));
    for (const id of ['createFood', 'updateFood', 'createSavedMeal', 'updateSavedMeal', 'logSavedMeal', 'updateBackupSettings', 'restoreBackup']) assert.ok(covered.has(id), id);
    assert.ok(operations.length >= 15, `fuzzed ${operations.length} operations`);
    const refusals: string[] = [];
    for (const operation of operations) {
      const refusal = await fuzz(doc, operation);
      if (refusal) refusals.push(`${operation.op.operationId}: ${refusal.request} → ${refusal.status} ${refusal.param}: ${refusal.message}`);
    }
    assert.deepEqual(refusals, [], `the document calls these valid but the server refuses them:\n${refusals.join('\n')}`);
  });

  /** Each rule the document once lacked: how to take it out of a copy, and what the server then refuses. */
  const GAPS: Array<{ name: string; operationId: string; param: string | string[]; remove: (d: Doc) => void }> = [
    {
      name: 'meal timestamp range (formatMinimum, x-max-future)',
      operationId: 'createMeal',
      param: 'timestamp',
      remove: (d) => {
        delete d.components.schemas.MealCreate.properties.timestamp.formatMinimum;
        delete d.components.schemas.MealCreate.properties.timestamp['x-max-future'];
      },
    },
    {
      name: 'meal timestamp upper bound alone (x-max-future)',
      operationId: 'createMeal',
      param: 'timestamp',
      remove: (d) => delete d.components.schemas.MealCreate.properties.timestamp['x-max-future'],
    },
    {
      name: 'sleep end at most 5 minutes ahead (x-max-future)',
      operationId: 'createSleepSession',
      param: 'end',
      remove: (d) => delete d.components.schemas.SleepCreate.properties.end['x-max-future'],
    },
    {
      name: 'webhook URL: format uri + http(s) pattern',
      operationId: 'createWebhook',
      param: 'url',
      remove: (d) => delete d.components.schemas.WebhookCreate.properties.url.pattern,
    },
    {
      name: 'snapshot include: the allowed section names',
      operationId: 'getSnapshot',
      param: 'include',
      remove: (d) => delete d.paths['/v1/snapshot'].get.parameters.find((p: Doc) => p.name === 'include').schema.pattern,
    },
    {
      name: 'settings timezone: IANA zones',
      operationId: 'updateSettings',
      param: 'timezone',
      remove: (d) => delete d.components.schemas.SettingsUpdate.properties.timezone.enum,
    },
    {
      name: 'event stream last_event_id: its pattern',
      operationId: 'streamEvents',
      param: 'last_event_id',
      remove: (d) => delete d.paths['/v1/events/stream'].get.parameters.find((p: Doc) => p.name === 'last_event_id').schema.pattern,
    },
    {
      name: 'daily scores: end_date needs start_date (x-dependent-required)',
      operationId: 'listDailyScores',
      param: 'start_date',
      remove: (d) => delete d.paths['/v1/digestion/scores/daily'].get['x-dependent-required'],
    },
    {
      name: 'food name: not blank (pattern \\S)',
      operationId: 'createFood',
      param: 'name',
      remove: (d) => delete d.components.schemas.FoodCreate.properties.name.pattern,
    },
    {
      name: 'food: nutrients or per_serving, exactly one (oneOf of required)',
      operationId: 'createFood',
      param: ['nutrients', 'per_serving'],
      remove: (d) => delete d.components.schemas.FoodCreate.oneOf,
    },
    {
      name: 'food edit: not both nutrients and per_serving (not required)',
      operationId: 'updateFood',
      param: 'per_serving',
      remove: (d) => delete d.components.schemas.FoodUpdate.not,
    },
    {
      name: 'food nutrients per 100 g: calories at most 1000 (maximum)',
      operationId: 'createFood',
      param: 'nutrients.calories',
      remove: (d) => {
        d.components.schemas.FoodCreate.properties.nutrients.properties.calories.maximum = 10_000;
        // Only nutrients per 100 g: per_serving has rules between fields of its own.
        delete d.components.schemas.FoodCreate.properties.per_serving;
        d.components.schemas.FoodCreate.oneOf = [{ required: ['nutrients'] }];
      },
    },
    {
      name: 'saved meal name: not blank (pattern \\S)',
      operationId: 'createSavedMeal',
      param: 'name',
      remove: (d) => delete d.components.schemas.SavedMealCreate.properties.name.pattern,
    },
    {
      name: 'logging a saved meal: timestamp range (formatMinimum, x-max-future)',
      operationId: 'logSavedMeal',
      param: 'timestamp',
      remove: (d) => {
        delete d.components.schemas.SavedMealLog.properties.timestamp.formatMinimum;
        delete d.components.schemas.SavedMealLog.properties.timestamp['x-max-future'];
      },
    },
    {
      name: 'backup folder: an absolute path (pattern)',
      operationId: 'updateBackupSettings',
      param: 'folder',
      remove: (d) => delete d.components.schemas.BackupSettingsUpdate.properties.folder.anyOf[0].pattern,
    },
  ];

  for (const gap of GAPS) {
    test(`without the rule for ${gap.name}, the fuzzer finds a request the server refuses`, async () => {
      const copy = structuredClone(doc);
      gap.remove(copy);
      const operation = fuzzedOperations(copy).find((o) => o.op.operationId === gap.operationId);
      assert.ok(operation, gap.operationId);
      const refusal = await fuzz(copy, operation, 200);
      assert.ok(refusal, 'the fuzzer found nothing');
      assert.equal(refusal.status, 400);
      const expected = Array.isArray(gap.param) ? gap.param : [gap.param];
      assert.ok(expected.includes(refusal.param?.toLowerCase().replaceAll('-', '_') ?? ''), `${refusal.param}: ${refusal.request}: ${refusal.message}`);
    });
  }

  /** The pattern the document gives each kind of id, by prefix, wherever an id is accepted. */
  function idPatterns(d: Doc): Array<{ where: string; prefix: string; pattern: string }> {
    const out: Array<{ where: string; prefix: string; pattern: string }> = [];
    const visit = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Doc;
      const prefix = typeof s.pattern === 'string' ? /^\^([a-z]+)_/.exec(s.pattern)?.[1] : undefined;
      if (prefix && prefix in ids) out.push({ where, prefix, pattern: s.pattern });
      for (const [k, v] of Object.entries(s)) visit(v, `${where}.${k}`);
    };
    for (const [path, ops] of Object.entries<Doc>(d.paths)) {
      for (const [method, op] of Object.entries<Doc>(ops)) for (const p of op.parameters ?? []) visit(p.schema, `${method.toUpperCase()} ${path} ${p.name}`);
    }
    for (const [name, schema] of Object.entries<Doc>(d.components.schemas)) visit(schema, name);
    return out;
  }

  test('every id the server hands out matches the pattern the document gives its kind, wherever an id is accepted', () => {
    const patterns = idPatterns(doc);
    // The food id patterns: the /v1/foods/{id} operations and a food entry's food_id at least.
    assert.ok(patterns.filter((p) => p.prefix === 'food').length >= 4, JSON.stringify(patterns.filter((p) => p.prefix === 'food')));
    const mismatches = patterns.flatMap(({ where, prefix, pattern }) =>
      // An import document's foods are custom foods only (the table is never exported).
      ids[prefix]!.filter((id) => !new RegExp(pattern).test(id) && !(where.startsWith('ImportDocument') && id.startsWith('food_usda_'))).map((id) => `${id} vs ${where}: ${pattern}`),
    );
    assert.deepEqual(mismatches, []);
  });

  test("a food entry's food_id is checked wherever it is accepted: an id of no food, or of another shape, is refused", async () => {
    const entry = (food_id: string) => ({ name: 'Entry', calories: 50, food_id, quantity: 1, unit: 'g' });
    const writes: Array<[string, (foods: unknown[]) => Promise<HttpReply>]> = [
      ['createMeal', (foods) => t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T09:00:00Z', meal_type: 'snack', foods } })],
      ['updateMeal', (foods) => t.request('PATCH', `/v1/nutrition/meals/${ids.meal![0]}`, { body: { foods } })],
      ['createSavedMeal', (foods) => t.request('POST', '/v1/nutrition/saved_meals', { body: { name: 'Fuzzed', foods } })],
      ['updateSavedMeal', (foods) => t.request('PATCH', `/v1/nutrition/saved_meals/${ids.smeal![0]}`, { body: { foods } })],
    ];
    const foodIdSchema = resolve(doc.components.schemas.FoodEntryInput, ctx()).properties.food_id;
    const unknown = fc.oneof(
      arbitraryFor(foodIdSchema, ctx()).map(String),
      fc.constantFrom('', 'bogus!', 'meal_x', ' food_abc'),
    ).filter((id) => t.service.app.db.prepare('SELECT 1 FROM foods WHERE id = ?').get(id) === undefined); // drawn ids may name a table food
    const accepted: string[] = [];
    for (const [operationId, write] of writes) {
      // Entries kept as sent (with calories) and entries computed from the food (without).
      for (const known of ids.food!) {
        const r = await write([entry(known)]);
        assert.ok(r.status < 300, `${operationId} ${known}: ${r.status} ${JSON.stringify(r.body)}`);
      }
      await fc.assert(
        fc.asyncProperty(unknown, fc.boolean(), async (id, withCalories) => {
          const sent = withCalories ? entry(id) : { food_id: id, quantity: 1, unit: 'g' };
          const r = await write([sent]);
          if (r.status !== 400 || errorOf(r).param !== 'foods.0.food_id') accepted.push(`${operationId} ${JSON.stringify(sent)} → ${r.status} ${r.body?.error?.param ?? ''}`);
        }),
        { numRuns: 25, seed: 20261126 },
      );
    }
    assert.deepEqual(accepted, []);
  });

  test('a webhook URL the server accepts is a URI (format: uri, RFC 3986), as the document says', async () => {
    // Web URLs with a character of anywhere in Unicode put somewhere in them.
    const candidate = fc.oneof(
      fc.constant('https://_òæ/p'),
      fc
        .tuple(fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }), fc.nat())
        .map(([url, extra, at]) => {
          const i = 8 + (at % Math.max(1, url.length - 7));
          return url.slice(0, i) + extra + url.slice(i);
        }),
    );
    const wrong: string[] = [];
    await fc.assert(
      fc.asyncProperty(candidate, async (url) => {
        const r = await t.request('POST', '/v1/webhooks', { body: { url, events: ['meal.created'] } });
        if (r.status === 201) await removeNewSubscriptions();
        if (r.status === 201 && !isUri(url)) wrong.push(url);
      }),
      { numRuns: 200, seed: 20261126 },
    );
    assert.deepEqual(wrong, [], 'accepted, but not a URI');
  });

  test('every operation answers keys as its x-required-scopes say, and the scope table lists it under them', async () => {
    const description: string = doc.components.securitySchemes.bearerAuth.description;
    // The table's rows, "| scope | grants | operations |", and its "Any valid key…: …" line.
    const table: Record<string, string[]> = {};
    for (const line of description.split('\n')) {
      const row = /^\| ([a-z:]+) \| [^|]* \| ([^|]*) \|$/.exec(line);
      if (row) table[row[1]!] = row[2]!.split(', ');
      const any = /^Any valid key[^:]*: (.*?) \(/.exec(line);
      if (any) table.any = any[1]!.split(', ');
    }
    const problems: string[] = [];
    for (const [path, ops] of Object.entries<Doc>(doc.paths)) {
      for (const [method, op] of Object.entries<Doc>(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (Array.isArray(op.security) && op.security.length === 0) {
          if (!description.includes(name)) problems.push(`${name}: public but not in the scope table`);
          continue;
        }
        if (path === '/v1/events/stream') continue; // an endless stream; its scopes filter events (events-stream tests)
        const needs: Scope[] = op['x-required-scopes'] ?? [];
        // Listed in the table under each scope it needs, or under "any valid key".
        const listed = Object.entries(table).filter(([, names]) => names.includes(name)).map(([scope]) => scope).sort();
        const expected = needs.length ? [...needs].sort() : ['any'];
        if (JSON.stringify(listed) !== JSON.stringify(expected)) problems.push(`${name}: needs ${expected} but the table lists it under ${listed}`);
        const url = path.replace(/\{(\w+)\}/g, 'x_0');
        const send = (key: string) => t.request(method.toUpperCase(), url, method === 'get' || method === 'delete' ? { key } : { key, body: {} });
        // With every scope but one it needs: refused, naming that scope.
        for (const missing of needs) {
          const r = await send(t.keyWith(...SCOPES.filter((s) => s !== missing)));
          if (r.status !== 403 || !errorOf(r).message.includes(missing)) problems.push(`${name} without ${missing}: ${r.status}`);
        }
        // With exactly what it needs (a key must hold one scope): past authentication and scopes.
        const r = await send(t.keyWith(...(needs.length ? needs : ['sleep:read' as Scope])));
        const section403 = path === '/v1/snapshot' && r.status === 403; // needs each section's scope, by include
        if (r.status === 401 || (r.status === 403 && !section403)) problems.push(`${name} with ${needs.join(',') || 'no scope it needs'}: ${r.status}`);
      }
    }
    assert.deepEqual(problems, []);
    const settings = await t.request('GET', '/v1/settings', { key: t.keyWith('sleep:read') });
    assert.equal(settings.status, 200);
    assert.match(description, /\| admin \|[^|]*changing settings[^|]*\|[^\n]*PATCH \/v1\/settings/);
    assert.match(description, /Any valid key[^\n]*GET \/v1\/settings/);
  });

  // Last: deleting removes the fixtures every test above names.
  test('no deletion of an id the document calls valid is refused (no 400)', async () => {
    const deletions = fuzzedOperations(doc, true);
    assert.ok(deletions.length >= 6, `fuzzed ${deletions.length} deletions`);
    const refusals: string[] = [];
    for (const operation of deletions) {
      const refusal = await fuzz(doc, operation, 20);
      if (refusal) refusals.push(`${operation.op.operationId}: ${refusal.request} → ${refusal.status} ${refusal.param}: ${refusal.message}`);
    }
    assert.deepEqual(refusals, [], refusals.join('\n'));
  });
});
