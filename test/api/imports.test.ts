import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runImport } from '../../server/imports/imports.js';
import { ImportCancelledError } from '../../server/imports/types.js';
import * as fx from '../imports/fixtures.js';
import { zipOf } from '../imports/zip.js';
import { errorOf, startTestService, type HttpReply, type TestService } from '../helpers/service.js';

async function upload(
  t: TestService,
  files: Array<{ name: string; data: string | Buffer }>,
  fields: Record<string, string> = {},
  key: string = t.adminKey,
  headers: Record<string, string> = {},
): Promise<HttpReply> {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([typeof f.data === 'string' ? f.data : new Uint8Array(f.data)]), f.name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${t.baseUrl}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}

/** Everything a person owns, as the export reads it (without the moment of export). */
async function state(t: TestService): Promise<unknown> {
  const doc = (await t.request('GET', '/v1/export')).body;
  delete doc.exported_at;
  return doc;
}

function eventCount(t: TestService, type: string): number {
  return (t.service.app.db.prepare('SELECT COUNT(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n;
}

const appleZip = () => zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml() }]);

describe('imports API', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('an Apple export zip imports meals and nights with their source, then re-importing it adds nothing', async () => {
    const before = await state(t);
    const r = await upload(t, [{ name: 'export.zip', data: appleZip() }]);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.object, 'import');
    assert.match(r.body.id, /^imp_/);
    assert.equal(r.body.source, 'apple_health');
    assert.equal(r.body.status, 'completed');
    assert.deepEqual([r.body.meals_added, r.body.sleep_added, r.body.duplicates_skipped], [3, 3, 1]);
    assert.deepEqual([r.body.first_day, r.body.last_day], ['2026-06-11', '2026-06-13']);
    assert.equal(r.body.timezone, 'Europe/Berlin');
    assert.equal(r.body.warnings.length, 1);
    assert.equal(eventCount(t, 'meal.created'), 0, 'an import sends no per-record events');

    const meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-06-11&end_date=2026-06-11')).body.data;
    assert.equal(meals.length, 3);
    assert.ok(meals.every((m: any) => m.source === 'apple_health' && m.inferred_time === false));
    const soup = meals.find((m: any) => m.description === 'Lentil soup, Rye bread');
    assert.equal(soup.utc_offset_min, -240);
    assert.equal(soup.macros.calories, 350);
    const nights = (await t.request('GET', '/v1/sleep/sessions?start_date=2026-06-01&end_date=2026-06-30')).body.data;
    assert.deepEqual(nights.map((s: any) => [s.source, s.nap]).sort(), [['apple_health', false], ['apple_health', false], ['apple_health', true]]);
    const overnight = (await t.request('GET', '/v1/digestion/scores/overnight?start_date=2026-06-10&end_date=2026-06-14')).body.data;
    const napScore = overnight.find((o: any) => o.sleep_id === nights.find((s: any) => s.nap).id);
    assert.ok(!napScore || napScore.score === null, 'a nap makes no overnight score');
    assert.ok(overnight.some((o: any) => o.score !== null), 'the nights do');

    const afterFirst = await state(t);
    assert.notDeepEqual(afterFirst, before);
    t.clock.advance(1000);
    const again = await upload(t, [{ name: 'export.zip', data: appleZip() }]);
    assert.equal(again.status, 201, again.text);
    assert.deepEqual([again.body.meals_added, again.body.sleep_added, again.body.duplicates_skipped], [0, 0, 7]);
    assert.deepEqual(await state(t), afterFirst, 're-import is a no-op');

    const list = (await t.request('GET', '/v1/imports')).body;
    assert.deepEqual(list.data.map((i: any) => i.id), [again.body.id, r.body.id]);
    assert.equal((await t.request('GET', `/v1/imports/${r.body.id}`)).body.meals_added, 3);
  });

  test('an overlapping later export adds only what is new; a night another app already recorded is not added twice', async () => {
    const first = await upload(t, [{ name: 'sleep-2026-07-01.json', data: fx.fitbitSleepJson(false) }], { timezone: 'America/Chicago' });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.sleep_added, 1);
    assert.equal(first.body.timezone, 'America/Chicago');
    const later = await upload(t, [{ name: 'sleep-2026-07-31.json', data: fx.fitbitSleepJson(true) }], { timezone: 'America/Chicago' });
    assert.deepEqual([later.body.sleep_added, later.body.duplicates_skipped], [1, 1]);
    // Oura's record of a night Fitbit already gave: overlapping, so skipped.
    const oura = JSON.stringify({ data: [{ id: 'o-dup', type: 'long_sleep', bedtime_start: '2026-07-01T23:30:00-05:00', bedtime_end: '2026-07-02T07:00:00-05:00', efficiency: 90 }] });
    const third = await upload(t, [{ name: 'oura.json', data: oura }]);
    assert.deepEqual([third.body.sleep_added, third.body.duplicates_skipped], [0, 1]);
  });

  test('a dry run reports what would be added, with samples, and writes nothing', async () => {
    const before = await state(t);
    const importsBefore = (await t.request('GET', '/v1/imports?limit=100')).body.data.length;
    const r = await upload(t, [{ name: 'Nutrition-Summary.csv', data: fx.mfpN2() }], { dry_run: 'true', source: 'myfitnesspal' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'dry_run');
    assert.equal(r.body.id, null);
    assert.equal(r.body.meals_added, 2);
    assert.equal(r.body.zone_assumed, true);
    assert.equal(r.body.samples.meals.length, 2);
    assert.equal(r.body.samples.meals[1].inferred_time, true);
    assert.equal(r.body.samples.meals[1].source, 'myfitnesspal');
    assert.deepEqual(await state(t), before);
    assert.equal((await t.request('GET', '/v1/imports?limit=100')).body.data.length, importsBefore);
  });

  test('undo removes what the import added and nobody edited, reports the rest, and restores the previous state exactly', async () => {
    const manual = await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-06-01T05:00:00Z', meal_type: 'breakfast', macros: { calories: 300 } } });
    assert.equal(manual.status, 201);
    const before = await state(t);
    const r = await upload(t, [{ name: 'servings.csv', data: fx.cronometerWideServings() }], { source: 'cronometer' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.meals_added, 6);
    assert.deepEqual(r.body.warnings, [{ file: 'servings.csv', line: 10, message: 'Day "06/03/2026" is not YYYY-MM-DD; the row was skipped.' }]);
    const undo = await t.request('DELETE', `/v1/imports/${r.body.id}`);
    assert.equal(undo.status, 200, undo.text);
    assert.equal(undo.body.status, 'undone');
    assert.deepEqual([undo.body.undo.meals_removed, undo.body.undo.kept], [6, []]);
    assert.deepEqual(await state(t), before, 'the database is as it was before the import');
    const twice = await t.request('DELETE', `/v1/imports/${r.body.id}`);
    assert.equal(twice.status, 409);
    assert.equal(errorOf(twice).code, 'import_already_undone');

    // Import again, edit one meal, undo: the edited meal stays and is reported.
    const again = await upload(t, [{ name: 'servings.csv', data: fx.cronometerWideServings() }]);
    assert.equal(again.body.meals_added, 6, 'after an undo the same file imports again');
    const stew = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-06-02&end_date=2026-06-02')).body.data.find((m: any) => m.description.startsWith('Mystery stew'));
    assert.equal(stew.calories_source, 'macros', 'unknown energy is marked derived, never logged as 0');
    assert.ok(Object.values(stew.nutrient_sources).every((s) => s === null), 'every nutrient the file left empty is unknown');
    const edit = await t.request('PATCH', `/v1/nutrition/meals/${stew.id}`, { body: { macros: { calories: 450 } } });
    assert.equal(edit.status, 200, edit.text);
    const partial = await t.request('DELETE', `/v1/imports/${again.body.id}`);
    assert.equal(partial.body.undo.meals_removed, 5);
    assert.deepEqual(partial.body.undo.kept, [{ id: stew.id, object: 'nutrition.meal', reason: 'edited' }]);
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${stew.id}`)).body.macros.calories, 450);
    const reimport = await upload(t, [{ name: 'servings.csv', data: fx.cronometerWideServings() }]);
    assert.equal(reimport.body.meals_added, 5, 'the edited meal is not added a second time beside itself');
  });

  test('Cronometer without per-food nutrients: a diary group is one meal holding its day\'s totals, never a 0-kcal meal beside it', async () => {
    const { servings, dailySummary } = fx.cronometerNarrowLateFood();
    const r = await upload(t, [{ name: 'servings.csv', data: servings }, { name: 'dailysummary.csv', data: dailySummary }]);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.meals_added, 2);
    const meals = (await t.request('GET', '/v1/nutrition/meals?start_date=2026-06-08&end_date=2026-06-08')).body.data;
    assert.deepEqual(
      meals.map((m: any) => [m.timestamp, m.meal_type, m.macros, m.calories_source, m.nutrient_sources.protein_g]),
      [
        ['2026-06-08T16:30:00Z', 'dinner', { calories: 820, protein_g: 30, carbs_g: 110, fat_g: 28, fiber_g: 9 }, 'logged', 'logged'],
        ['2026-06-08T06:00:00Z', 'breakfast', { calories: 160, protein_g: 6, carbs_g: 30, fat_g: 2, fiber_g: 2 }, 'logged', 'logged'],
      ],
    );
    const day = meals.reduce((sum: number, m: any) => sum + m.macros.calories, 0);
    assert.equal(day, 980, 'the day adds up to the file\'s Total row');
    await t.request('DELETE', `/v1/imports/${r.body.id}`);
  });

  test('Chyme\'s own export imports through the same endpoint and keeps ids, source, inferred_time and nap', async () => {
    const r = await upload(t, [{ name: 'chyme-export.json', data: fx.chymeExport() }]);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.source, 'chyme');
    assert.deepEqual([r.body.meals_added, r.body.sleep_added], [1, 1]);
    const meal = (await t.request('GET', '/v1/nutrition/meals/meal_fromExport1')).body;
    assert.deepEqual([meal.source, meal.inferred_time], ['cronometer', true]);
    const undo = await t.request('DELETE', `/v1/imports/${r.body.id}`);
    assert.deepEqual([undo.body.undo.meals_removed, undo.body.undo.sleep_removed], [1, 1]);
    assert.equal((await t.request('GET', '/v1/nutrition/meals/meal_fromExport1')).status, 404);
  });

  test('bad input gets a sentence and writes nothing', async () => {
    const before = await state(t);
    const wrong = await upload(t, [{ name: 'servings.csv', data: fx.cronometerWideServings() }], { source: 'oura' });
    assert.equal(wrong.status, 400);
    assert.equal(errorOf(wrong).code, 'import_invalid');
    assert.match(errorOf(wrong).message, /servings\.csv is not Oura data: expected Oura sleep data.*found a Cronometer servings\.csv/);
    const zip = appleZip();
    const truncated = await upload(t, [{ name: 'export.zip', data: zip.subarray(0, zip.length - 50) }]);
    assert.match(errorOf(truncated).message, /export\.zip is not a complete zip archive/);
    const latin = await upload(t, [{ name: 'servings.csv', data: Buffer.from('Day,Time,Group,Food Name,Amount,Energy (kcal)\n2026-01-01,,Lunch,Cr\xe8me,1,100\n', 'latin1') }]);
    assert.match(errorOf(latin).message, /not UTF-8/);
    const badZone = await upload(t, [{ name: 'a.csv', data: fx.mfpN1() }], { timezone: 'Mars/Olympus' });
    assert.equal(errorOf(badZone).param, 'timezone');
    const badField = await upload(t, [{ name: 'a.csv', data: fx.mfpN1() }], { colour: 'red' });
    assert.equal(errorOf(badField).code, 'parameter_unknown');
    const none = await upload(t, [], { source: 'oura' });
    assert.equal(errorOf(none).param, 'file');
    const json = await t.request('POST', '/v1/imports', { body: { file: 'x' } });
    assert.equal(json.status, 415);
    assert.deepEqual(await state(t), before);
  });

  test('an Idempotency-Key replays the first answer for the same files and refuses other files', async () => {
    const key = { 'idempotency-key': 'import-once' };
    const first = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], {}, t.adminKey, key);
    assert.equal(first.status, 201, first.text);
    assert.ok(first.body.meals_added > 0);
    const afterFirst = await state(t);
    t.clock.advance(1000);

    const retry = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], {}, t.adminKey, key);
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(retry.body, first.body, 'the first answer, not a second import that added nothing');
    assert.equal((await t.request('GET', '/v1/imports')).body.data.filter((i: any) => i.id === first.body.id).length, 1);

    // Same name, other content; same content, other name; same files, another field: all conflicts.
    const otherContent = await upload(t, [{ name: 'n.csv', data: fx.mfpN1() }], {}, t.adminKey, key);
    assert.equal(otherContent.status, 409, otherContent.text);
    assert.equal(errorOf(otherContent).code, 'idempotency_conflict');
    const otherName = await upload(t, [{ name: 'm.csv', data: fx.mfpN2() }], {}, t.adminKey, key);
    assert.equal(errorOf(otherName).code, 'idempotency_conflict');
    const otherField = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], { dry_run: 'true' }, t.adminKey, key);
    assert.equal(errorOf(otherField).code, 'idempotency_conflict');
    assert.deepEqual(await state(t), afterFirst, 'a refused retry imports nothing');

    // A conflict did not overwrite the record: the first files still replay.
    const again = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], {}, t.adminKey, key);
    assert.deepEqual([again.status, again.body.id], [201, first.body.id]);

    // A refused request is an answer too: its retry replays the refusal.
    const badKey = { 'idempotency-key': 'import-bad' };
    const bad = await upload(t, [{ name: 'x.csv', data: 'nothing,here\n1,2\n' }], {}, t.adminKey, badKey);
    assert.equal(bad.status, 400);
    const badAgain = await upload(t, [{ name: 'x.csv', data: 'nothing,here\n1,2\n' }], {}, t.adminKey, badKey);
    assert.deepEqual([badAgain.status, badAgain.headers.get('idempotent-replayed'), errorOf(badAgain).message], [400, 'true', errorOf(bad).message]);
  });

  test('a cancel before the write stops the parse and writes nothing', async () => {
    const before = await state(t);
    const path = join(mkdtempSync(join(tmpdir(), 'chyme-cancel-')), 'export.xml');
    writeFileSync(path, fx.appleExportXml());
    const cancel = new AbortController();
    // Cancelled at the worker's first report, while it parses.
    const onProgress = () => cancel.abort();
    await assert.rejects(runImport(t.service.app, { files: [{ path }], dryRun: false }, onProgress, cancel.signal), ImportCancelledError);
    assert.deepEqual(await state(t), before);
    const done = await runImport(t.service.app, { files: [{ path }], dryRun: true });
    assert.ok(done.record.mealsAdded + done.record.duplicatesSkipped > 0, 'the same file is read through when not cancelled');
  });

  test('a client gone mid-upload leaves nothing behind, and its Idempotency-Key is free again', async () => {
    const before = await state(t);
    // Uploads are received beside the database (not in a /tmp that may be RAM).
    const uploadDirs = () => readdirSync(t.dir).filter((n) => n.startsWith('.chyme-upload-'));
    assert.deepEqual(uploadDirs(), []);
    const boundary = 'chyme-test-boundary';
    const encoder = new TextEncoder();
    let sentHead!: () => void;
    const headSent = new Promise<void>((r) => (sentHead = r));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="n.csv"\r\n\r\n${fx.mfpN2()}`));
        sentHead();
        // …and never the rest: the client goes away instead.
      },
    });
    const abort = new AbortController();
    const pending = fetch(`${t.baseUrl}/v1/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'idempotency-key': 'gone-midway' },
      body,
      duplex: 'half',
      signal: abort.signal,
    } as RequestInit).catch((err: Error) => err);
    await headSent;
    // The server has the request once the in-flight key refuses a second one.
    for (;;) {
      const r = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], {}, t.adminKey, { 'idempotency-key': 'gone-midway' });
      if (r.status === 409) break;
      assert.fail(`expected the first request to hold the key, got ${r.status} ${r.text}`);
    }
    while (uploadDirs().length === 0) await new Promise((r) => setImmediate(r));
    abort.abort();
    assert.ok((await pending) instanceof Error);
    assert.deepEqual(await state(t), before, 'nothing written');
    // The half-received upload is removed (the handler does not wait for the rest for ever).
    while (uploadDirs().length > 0) await new Promise((r) => setImmediate(r));
    let retry;
    // The server sees the closed connection soon after the client does.
    while ((retry = await upload(t, [{ name: 'n.csv', data: fx.mfpN2() }], {}, t.adminKey, { 'idempotency-key': 'gone-midway' })).status === 409);
    assert.equal(retry.status, 201, retry.text);
  });

  test('upload folders a crash left beside the database are removed once a day old, never younger', async () => {
    const { removeStaleUploadDirs } = await import('../../server/imports/uploads.js');
    const { mkdirSync, utimesSync } = await import('node:fs');
    const old = join(t.dir, '.chyme-upload-crashed');
    const fresh = join(t.dir, '.chyme-upload-running');
    mkdirSync(old);
    writeFileSync(join(old, '0'), 'half an export');
    mkdirSync(fresh);
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    utimesSync(old, dayAgo, dayAgo);
    assert.equal(await removeStaleUploadDirs(t.dbPath, 24 * 3600_000), 1);
    assert.deepEqual(readdirSync(t.dir).filter((n) => n.startsWith('.chyme-upload-')), ['.chyme-upload-running']);
    rmSync(fresh, { recursive: true });
  });

  test('importing needs nutrition:write and sleep:write; reading imports needs the read scopes', async () => {
    const r = await upload(t, [{ name: 'a.csv', data: fx.mfpN1() }], {}, t.keyWith('nutrition:write'));
    assert.equal(r.status, 403);
    assert.match(errorOf(r).message, /sleep:write/);
    const list = await t.request('GET', '/v1/imports', { key: t.keyWith('nutrition:read') });
    assert.equal(list.status, 403);
    assert.equal((await t.request('GET', '/v1/imports', { key: t.keyWith('nutrition:read', 'sleep:read') })).status, 200);
  });

  test('the OpenAPI document describes imports and the new fields', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    const post = doc.paths['/v1/imports'].post;
    assert.ok(post.requestBody.content['multipart/form-data'].schema.properties.file);
    assert.deepEqual(post['x-required-scopes'], ['nutrition:write', 'sleep:write']);
    assert.ok(doc.paths['/v1/imports/{id}'].delete);
    assert.ok(doc.components.schemas.Import.properties.duplicates_skipped);
    assert.equal(doc.components.schemas.Meal.properties.inferred_time.type, 'boolean');
    assert.ok(doc.components.schemas.Meal.properties.source.enum.includes('apple_health'));
    assert.equal(doc.components.schemas.SleepSession.properties.nap.type, 'boolean');
  });

  test('the API keeps answering while a large export is parsed', async () => {
    // ~6 MB of heart-rate records around one night: parsing takes a while, off the request thread.
    const filler = Array.from({ length: 40_000 }, (_, i) =>
      `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="${fx.appleDate(new Date(Date.UTC(2026, 5, 1) + i * 60_000).toISOString())}" endDate="${fx.appleDate(new Date(Date.UTC(2026, 5, 1) + i * 60_000).toISOString())}" value="${60 + (i % 30)}"/>\n`,
    ).join('');
    const big = zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml(filler.repeat(3)) }]);
    let importDone = false;
    const pending = upload(t, [{ name: 'big.zip', data: big }], { dry_run: 'true' }).then((r) => {
      importDone = true;
      return r;
    });
    let answeredDuring = 0;
    while (!importDone) {
      const s = await t.request('GET', '/v1/digestion/state');
      assert.equal(s.status, 200);
      if (!importDone) answeredDuring++;
    }
    const r = await pending;
    assert.equal(r.status, 200, r.text);
    assert.ok(answeredDuring > 0, 'state was answered while the import ran');
  });
});
