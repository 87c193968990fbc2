import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseImport, type ParseOutcome } from '../../server/imports/parse.js';
import { ImportInputError, type ChosenSource } from '../../server/imports/types.js';
import * as fx from './fixtures.js';
import { zipOf } from './zip.js';

const dir = mkdtempSync(join(tmpdir(), 'chyme-parsers-'));
let n = 0;
function file(name: string, data: string | Buffer): { path: string; name: string } {
  const path = join(dir, `${n++}-${name.replace(/[^\w.-]/g, '_')}`);
  writeFileSync(path, data);
  return { path, name };
}

function parse(files: Array<{ path: string; name: string }>, chosen?: ChosenSource, timeZone = 'Europe/Berlin'): Promise<ParseOutcome> {
  return parseImport({ files, chosen, timeZone, timeZoneExplicit: false });
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

async function refused(files: Array<{ path: string; name: string }>, pattern: RegExp, chosen?: ChosenSource): Promise<void> {
  await assert.rejects(parse(files, chosen), (err: unknown) => {
    assert.ok(err instanceof ImportInputError, `expected a sentence, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

test('Apple Health: found by content under a translated name; correlations counted once; units converted; lived zone from HKTimeZone', async () => {
  const out = await parse([file('eksport.xml', fx.appleExportXml())]);
  assert.deepEqual(out.sources, ['apple_health']);
  assert.equal(out.meals.length, 3);
  const [mfp, lifesum, foodnoms] = out.meals;
  // MyFitnessPal's loose records ("Cal", meal/Meal labels): two entries 15 min apart make one breakfast.
  assert.equal(iso(mfp!.timestampMs), '2026-06-11T06:30:00Z');
  assert.equal(mfp!.utcOffsetMin, 120, 'no HKTimeZone: the person\'s zone (Berlin, summer), not the export day\'s -0800');
  assert.equal(mfp!.mealType, 'breakfast');
  assert.deepEqual([mfp!.calories, mfp!.proteinG, mfp!.carbsG, mfp!.fatG, mfp!.sodiumMg], [520, 25, 50, 12, 300]);
  assert.equal(mfp!.fiberG, null, 'not recorded stays unknown, never 0');
  assert.equal(mfp!.caffeineMg, null);
  assert.deepEqual(mfp!.foods, []);
  // Food correlations: children counted once (their top-level copies are not), kJ and mg converted.
  assert.equal(lifesum!.utcOffsetMin, -240, 'HKTimeZone America/New_York wins over the export offset');
  assert.equal(lifesum!.calories, 350, '1046 kJ = 250 kcal, plus 100 kcal');
  assert.equal(lifesum!.proteinG, 15);
  assert.equal(lifesum!.fiberG, 8, '8000 mg = 8 g');
  assert.deepEqual(lifesum!.foods, [
    { name: 'Lentil soup', calories: 250 },
    { name: 'Rye bread', calories: 100 },
  ]);
  // Loose records carrying HKFoodType on each record.
  assert.deepEqual(foodnoms!.foods, [
    { name: 'Pasta', calories: 600 },
    { name: 'Espresso', calories: 5 },
  ]);
  assert.equal(foodnoms!.caffeineMg, 80);
  assert.equal(foodnoms!.mealType, 'dinner', '19:30 in Berlin');
  assert.ok(out.meals.every((m) => !m.inferredTime));
});

test('Apple Health: progress counts bytes, so it reaches the whole file even with non-ASCII names', async () => {
  const xml = fx.appleExportXml();
  assert.ok(Buffer.byteLength(xml) > xml.length, 'the fixture has multi-byte characters');
  const seen: Array<{ bytesDone: number; bytesTotal: number }> = [];
  await parseImport({ files: [file('export.xml', xml)], timeZone: 'Europe/Berlin', timeZoneExplicit: false }, (p) => seen.push(p));
  assert.deepEqual(seen.at(-1), { bytesDone: Buffer.byteLength(xml), bytesTotal: Buffer.byteLength(xml) });
});

test('Apple Health sleep: staged watch night beats an overlapping unstaged app; InBed widens the window; old "Asleep" and new "AsleepUnspecified" both read; naps marked', async () => {
  const out = await parse([file('export.xml', fx.appleExportXml())]);
  assert.equal(out.sleeps.length, 3);
  const [watch, oldPhone, nap] = out.sleeps;
  assert.equal(iso(watch!.startMs), '2026-06-10T20:50:00Z', 'the phone\'s InBed starts the window');
  assert.equal(iso(watch!.endMs), '2026-06-11T05:00:00Z');
  assert.equal(watch!.staged, true);
  assert.equal(watch!.efficiency, 0.898, 'asleep union 440 min over a 490 min window');
  assert.equal(watch!.awakenings, 1, 'the Awake after the last asleep sample does not count');
  assert.equal(out.duplicatesInFiles, 1, 'AutoSleep\'s copy of the same night was dropped, not summed');
  assert.equal(oldPhone!.staged, false);
  assert.equal(oldPhone!.awakenings, null, 'an app that writes no Awake samples says nothing about awakenings');
  assert.equal(oldPhone!.efficiency, Math.round((420 / 460) * 1000) / 1000);
  assert.equal(nap!.nap, true);
  assert.equal(watch!.nap, false);
});

test('Apple Health: a bad character is a warning with its line, the broken iOS 16 DTD parses, the zip is streamed and other entries passed over', async () => {
  const zip = zipOf([
    { name: 'apple_health_export/exportar.xml', data: fx.appleExportXml() },
    { name: 'apple_health_export/export_cda.xml', data: '<?xml version="1.0"?><ClinicalDocument/>' },
    { name: 'apple_health_export/workout-routes/route_1.gpx', data: '<gpx/>' },
  ]);
  const out = await parse([file('exportar.zip', zip)]);
  assert.deepEqual(out.files, ['exportar.zip:apple_health_export/exportar.xml']);
  assert.equal(out.meals.length, 3);
  assert.equal(out.warnings.length, 1);
  assert.equal(out.warnings[0]!.file, 'exportar.zip:apple_health_export/exportar.xml');
  assert.equal(typeof out.warnings[0]!.line, 'number');
  assert.match(out.warnings[0]!.message, /disallowed character/);
});

test('Apple Health: an export cut short, a truncated zip, and a file that is not the chosen source are refused with sentences', async () => {
  await refused([file('cut.xml', fx.appleExportXml().slice(0, 3000))], /cut short/);
  const zip = zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml() }]);
  await refused([file('export.zip', zip.subarray(0, zip.length - 40))], /not a complete zip archive/);
  await refused([file('servings.csv', fx.cronometerWideServings())], /is not Apple Health data: expected an Apple Health export.*found a Cronometer servings\.csv/, 'apple_health');
});

test('Cronometer wide servings.csv: one meal per group within an hour, untimed rows join, renamed groups are snacks, empty cells unknown', async () => {
  const out = await parse([file('servings.csv', fx.cronometerWideServings())]);
  const byTime = out.meals.map((m) => [iso(m.timestampMs), m.mealType, m.inferredTime, m.calories] as const);
  assert.deepEqual(byTime, [
    ['2026-06-01T06:10:00Z', 'breakfast', false, 194],
    ['2026-06-01T11:05:00Z', 'snack', false, 95],
    ['2026-06-01T19:39:00Z', 'breakfast', false, 90],
    ['2026-06-01T22:15:00Z', 'dinner', false, 80],
    ['2026-06-02T10:30:00Z', 'lunch', true, 230],
    ['2026-06-02T17:00:00Z', 'dinner', false, null],
  ]);
  const breakfast = out.meals[0]!;
  assert.equal(breakfast.caffeineMg, 95, 'an empty Caffeine cell adds nothing; coffee\'s 95 mg is kept');
  assert.deepEqual(breakfast.foods.map((f) => f.name), ['Oats (0.50 cup)', 'Coffee (1.00 cup)', 'Blueberries (0.50 cup)']);
  assert.match(out.meals[1]!.description, /^Snack 1: Apple/);
  const stew = out.meals[5]!;
  assert.deepEqual([stew.calories, stew.proteinG, stew.fiberG, stew.caffeineMg], [null, null, null, null], 'missing is null, never 0');
  assert.deepEqual(out.warnings, [{ file: 'servings.csv', line: 10, message: 'Day "06/03/2026" is not YYYY-MM-DD; the row was skipped.' }]);
});

test('Cronometer narrow servings.csv takes totals from dailysummary.csv, never from its Total row', async () => {
  const out = await parse([file('servings.csv', fx.cronometerNarrowServings()), file('dailysummary.csv', fx.cronometerDailySummary())]);
  assert.equal(out.meals.length, 2);
  const [breakfast, lunch] = out.meals;
  assert.deepEqual([breakfast!.calories, breakfast!.caffeineMg, breakfast!.description], [400, 40, 'Porridge (1.00 bowl), Tea (1.00 cup)']);
  assert.deepEqual([lunch!.calories, lunch!.caffeineMg, lunch!.inferredTime, iso(lunch!.timestampMs)], [700, null, true, '2026-06-05T10:30:00Z']);
  const alone = await parse([file('servings.csv', fx.cronometerNarrowServings())]);
  assert.match(alone.warnings[0]!.message, /together with dailysummary\.csv.*undo this import and import both files/);
});

test('Cronometer narrow servings.csv: a food logged hours after the rest of its group stays in the group\'s one meal, which holds the group\'s totals', async () => {
  const { servings, dailySummary } = fx.cronometerNarrowLateFood();
  const out = await parse([file('servings.csv', servings), file('dailysummary.csv', dailySummary)]);
  assert.deepEqual(
    out.meals.map((m) => [iso(m.timestampMs), m.mealType, m.calories, m.proteinG, m.carbsG, m.fatG, m.caffeineMg, m.description]),
    [
      ['2026-06-08T06:00:00Z', 'breakfast', 160, 6, 30, 2, null, 'Toast (2.00 slice)'],
      ['2026-06-08T16:30:00Z', 'dinner', 820, 30, 110, 28, 0, 'Pasta (1.00 plate), Salad (1.00 bowl), Chamomile tea (1.00 cup)'],
    ],
    'one meal per group and day at its first time; no phantom meal at 10:15 PM',
  );
  assert.deepEqual(out.warnings, []);
});

test('Cronometer: daily totals of a group with no entry on a day servings.csv covers are a meal at the group\'s default time; days it does not cover are left out with a warning; an empty Group is Uncategorized in both files', async () => {
  const servings = `${fx.cronometerNarrowServings()}2026-06-05,9:10 PM,,Crackers,4.00 each,Grains\n`;
  const daily = fx
    .cronometerDailySummary()
    .replace('2026-06-05,Total,', '2026-06-05,Snacks,150.00,,100.00,20.00,1.00,6.00,3.00,false\n2026-06-05,,90.00,,80.00,12.00,1.00,4.00,2.00,false\n2026-06-05,Total,')
    .concat('2026-06-06,Dinner,600.00,,700.00,60.00,8.00,25.00,30.00,false\n2026-06-09,Lunch,500.00,,700.00,60.00,8.00,25.00,30.00,false\n');
  const out = await parse([file('servings.csv', servings), file('dailysummary.csv', daily)]);
  assert.deepEqual(
    out.meals.map((m) => [iso(m.timestampMs), m.mealType, m.inferredTime, m.calories, m.description]),
    [
      ['2026-06-05T05:45:00Z', 'breakfast', false, 400, 'Porridge (1.00 bowl), Tea (1.00 cup)'],
      ['2026-06-05T10:30:00Z', 'lunch', true, 700, 'Salad (1.00 plate)'],
      ['2026-06-05T13:30:00Z', 'snack', true, 150, ''],
      ['2026-06-05T19:10:00Z', 'snack', false, 90, 'Crackers (4.00 each)'],
    ],
  );
  assert.deepEqual(out.warnings, [
    { file: 'dailysummary.csv', line: null, message: '1 diary group(s) in dailysummary.csv have no entry in servings.csv on a day it covers; each became a meal at its group\'s default time.' },
    {
      file: 'dailysummary.csv',
      line: null,
      message: 'dailysummary.csv has totals for 2 day(s) (2026-06-06 to 2026-06-09) on which servings.csv has no entry; they were not imported. Import the servings.csv of those dates together with dailysummary.csv to add them.',
    },
  ]);
  // Read alone, the Daily Nutrition file makes every group a meal at its default time.
  const alone = await parse([file('dailysummary.csv', daily)]);
  assert.equal(alone.meals.length, 6);
  assert.deepEqual(alone.warnings, []);
});

test('MyFitnessPal: N1 (CRLF, Note), N2 (Time) and N3 (BOM) shapes; %DV columns never read as mg; default times marked inferred', async () => {
  const out = await parse([file('Nutrition-Summary-2026-06-01-to-2026-06-30.csv', fx.mfpN1()), file('Nutrition-Summary.csv', fx.mfpN2()), file('old.csv', fx.mfpN3())]);
  assert.deepEqual(
    out.meals.map((m) => [iso(m.timestampMs), m.mealType, m.inferredTime, m.calories, m.sodiumMg, m.description]),
    [
      ['2018-03-04T06:30:00Z', 'breakfast', false, 300, 150, ''],
      ['2026-06-20T06:00:00Z', 'breakfast', true, 350, 210, 'felt fine'],
      ['2026-06-20T13:30:00Z', 'snack', true, 250, 120, 'Post-Workout'],
      ['2026-06-21T10:05:00Z', 'lunch', false, 550, 600, ''],
      ['2026-06-21T17:00:00Z', 'dinner', true, 600, 800, ''],
    ],
  );
  assert.ok(out.meals.every((m) => m.caffeineMg === null && m.foods.length === 0), 'MyFitnessPal has no caffeine and no food names');
  assert.equal(out.meals[0]!.utcOffsetMin, 60, '2018-03-04 in Berlin is winter time');
});

test('Oura: API v2 JSON, membership CSV (";" and JSON cells with commas) and v1 JSON; deleted and rest skipped; naps marked; the same night once', async () => {
  const out = await parse([file('sleep.json', fx.ouraApiJson()), file('sleepmodel.csv', fx.ouraMembershipCsv()), file('oura_v1.json', fx.ouraV1Json())]);
  assert.equal(out.zoneAssumed, null, 'every Oura time carries its offset');
  assert.deepEqual(
    out.sleeps.map((s) => [iso(s.startMs), iso(s.endMs), s.efficiency, s.awakenings, s.nap]),
    [
      ['2025-12-01T22:00:00Z', '2025-12-02T06:00:00Z', 0.9, 1, false],
      ['2026-07-10T04:15:00Z', '2026-07-10T12:05:00Z', 0.87, 2, false],
      ['2026-07-10T19:00:00Z', '2026-07-10T19:35:00Z', 0.87, null, true],
      ['2026-07-11T08:00:00Z', '2026-07-11T09:30:00Z', 0.87, null, true],
      ['2026-07-14T20:40:00Z', '2026-07-15T04:50:00Z', 0.91, 1, false],
    ],
  );
  assert.equal(out.duplicatesInFiles, 1, 'oura-night-1 is in both the JSON and the CSV');
});

test('Fitbit: legacy JSON in Profile.csv\'s zone (or --tz), awakenings from data and shortData, naps from mainSleep, monthly files overlapping', async () => {
  const zip = zipOf([
    { name: 'Takeout/Fitbit/Global Export Data/sleep-2026-07-01.json', data: fx.fitbitSleepJson() },
    { name: 'Takeout/Fitbit/Global Export Data/sleep-2026-07-31.json', data: fx.fitbitSleepJson(false) },
    { name: 'Takeout/Fitbit/Your Profile/Profile.csv', data: fx.fitbitProfileCsv() },
  ]);
  const out = await parse([file('takeout.zip', zip)]);
  assert.equal(out.zoneAssumed, 'America/Chicago');
  assert.deepEqual(
    out.sleeps.map((s) => [iso(s.startMs), s.efficiency, s.awakenings, s.nap]),
    [
      ['2026-07-02T04:10:30Z', 0.96, 2, false],
      ['2026-07-03T19:00:00Z', 0.88, 1, true],
    ],
  );
  assert.equal(out.duplicatesInFiles, 1);
  const explicit = await parseImport({ files: [file('takeout.zip', zip)], timeZone: 'Europe/Berlin', timeZoneExplicit: true });
  assert.equal(iso(explicit.sleeps[0]!.startMs), '2026-07-01T21:10:30Z', 'a zone the person names wins over Profile.csv');
});

test('Google Health UserSleeps.csv: each night kept once (v2), efficiency from minutes, short sleeps are naps', async () => {
  const out = await parse([file('UserSleeps_2026-08-01.csv', fx.googleUserSleepsCsv())], 'fitbit');
  assert.deepEqual(
    out.sleeps.map((s) => [iso(s.startMs), s.efficiency, s.awakenings, s.nap, s.staged]),
    [
      ['2026-08-01T03:06:00Z', 0.903, null, false, true],
      ['2026-08-01T18:00:00Z', 0.833, null, true, false],
    ],
  );
});

test('Google Health UserSleepStages.csv gives the awakenings of its night (by sleep_id), found by content inside a Takeout zip', async () => {
  const zip = zipOf([
    { name: 'Takeout/Fitbit/Health Fitness Data_GoogleData/UserSleeps_2026-08-01.csv', data: fx.googleUserSleepsCsv() },
    { name: 'Takeout/Fitbit/Health Fitness Data_GoogleData/UserSleepStages_2026-08-01.csv', data: fx.googleUserSleepStagesCsv() },
  ]);
  const out = await parse([file('takeout.zip', zip)], 'fitbit');
  assert.deepEqual(
    out.sleeps.map((s) => [iso(s.startMs), s.efficiency, s.awakenings, s.nap, s.staged]),
    [
      ['2026-08-01T03:06:00Z', 0.903, 2, false, true],
      ['2026-08-01T18:00:00Z', 0.833, null, true, false],
    ],
  );
  assert.deepEqual(
    out.warnings.map((w) => [w.file, w.line]),
    [['takeout.zip:Takeout/Fitbit/Health Fitness Data_GoogleData/UserSleepStages_2026-08-01.csv', 14]],
    'the unreadable stage row is a warning with its line',
  );
  // Versions compare by number: 10 is newer than 9.
  const numbered = fx.googleUserSleepsCsv().replace(/sleep_session_v1/g, '10').replace(/sleep_session_v2/g, '9');
  const tenth = await parse([file('UserSleeps.csv', numbered)], 'fitbit');
  assert.equal(iso(tenth.sleeps[0]!.startMs), '2026-08-01T03:10:00Z', 'version 10 (g-1) kept over 9');
  const alone = await parse([file('UserSleepStages_2026-08-01.csv', fx.googleUserSleepStagesCsv())], 'fitbit');
  assert.equal(alone.sleeps.length, 0);
  assert.match(alone.warnings.at(-1)!.message, /import them with the UserSleeps_\*\.csv/);
});

test('stray quotes in a cell do not stop the file; a quote never closed is a warning, not a crash', async () => {
  const stray = fx.mfpN1().replace('2026-06-20,Post-Workout,250', '2026-06-20,Post"Workout,250');
  const out = await parse([file('Nutrition-Summary.csv', `${stray.trimEnd()}\r\n2026-06-22,Dinner,500,10,3,1,4,0,20,210,300,45,5,12,15,20,35,15,10,\r\n`)]);
  assert.equal(out.meals.length, 3);
  assert.equal(out.meals[1]!.description, 'Post"Workout');
  const unclosed = fx.mfpN1().replace('felt fine', '"felt fine');
  const cut = await parse([file('Nutrition-Summary.csv', unclosed)]);
  assert.match(cut.warnings[0]!.message, /could not be read as CSV \(Quote Not Closed/);
  assert.equal(cut.warnings[0]!.file, 'Nutrition-Summary.csv');
});

test('Refused as a whole: non-UTF-8 text, UTF-16, files no importer reads, a Chyme export mixed with others', async () => {
  await refused([file('latin1.csv', Buffer.from('Day,Time,Group,Food Name,Amount,Energy (kcal)\n2026-01-01,,Breakfast,Cr\xe8me,1,100\n', 'latin1'))], /not UTF-8 text/);
  await refused([file('utf16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Date,Meal\n', 'utf16le')]))], /not UTF-8/);
  await refused([file('notes.txt', 'hello,world\n')], /not an export Chyme can import: found a file starting "hello,world"/);
  await refused([file('exercises.csv', 'Day,Time,Group,Exercise,Minutes,Calories Burned\n')], /Cronometer exercises file, which holds no meals/);
  await refused([file('chyme.json', fx.chymeExport()), file('sleep.json', fx.ouraApiJson())], /imported on its own/);
  await refused([file('empty.zip', zipOf([{ name: 'readme.md', data: '# nothing' }]))], /None of these files/);
  // A zip entry past a sane size is refused before it is read; one whose content is shorter than
  // its archive says is damaged.
  const big = fx.mfpN1() + `${'2026-06-22,Lunch,350,10,3,1,4,0,20,210,300,45,5,12,15,20,35,15,10,\r\n'.repeat(400)}`;
  await refused([file('mfp.zip', zipOf([{ name: 'Nutrition-Summary.csv', data: big, declaredSize: 0xfffffff0 }]))], /mfp\.zip:Nutrition-Summary\.csv is 4\.0 GB, more than any a MyFitnessPal Nutrition-Summary CSV can be \(at most 512 MB\); it was refused/);
  await refused([file('lying.zip', zipOf([{ name: 'Nutrition-Summary.csv', data: fx.mfpN1(), declaredSize: 0xfffffff0 }]))], /lying\.zip:Nutrition-Summary\.csv could not be read \(.*\): the file or its archive is damaged/);
});

test('Unknown is never 0: an Apple record with an empty value is skipped, not read as 0', async () => {
  const extra =
    fx.dietRec('FoodNoms', 'EnergyConsumed', 'kcal', 200, '2026-06-12T10:00:00Z', { HKFoodType: 'Bagel' }) +
    fx.dietRec('FoodNoms', 'Protein', 'g', 0, '2026-06-12T10:00:00Z', { HKFoodType: 'Bagel' }).replace('value="0"', 'value=""') +
    fx.dietRec('FoodNoms', 'FatTotal', 'g', 0, '2026-06-12T10:00:00Z', { HKFoodType: 'Bagel' }).replace('value="0"', 'value=" "');
  const out = await parse([file('export.xml', fx.appleExportXml(extra))]);
  const bagel = out.meals.find((m) => m.description === 'Bagel')!;
  assert.deepEqual([bagel.calories, bagel.proteinG, bagel.fatG], [200, null, null]);
  assert.deepEqual(
    out.warnings.filter((w) => /unreadable value/.test(w.message)).map((w) => w.message.slice(0, 60)),
    ['A HKQuantityTypeIdentifierDietaryProtein record has an unrea', 'A HKQuantityTypeIdentifierDietaryFatTotal record has an unre'],
  );
});

test('A diary row that gives no number and names no food makes no meal (it would be an invented one); it is a warning with its line', async () => {
  const mfp = `${fx.mfpN1().trimEnd()}\r\n2026-06-22,Dinner,,,,,,,,,,,,,,,,,,\r\n`;
  const out = await parse([file('Nutrition-Summary.csv', mfp)]);
  assert.deepEqual(out.meals.map((m) => m.description), ['felt fine', 'Post-Workout']);
  assert.deepEqual(out.warnings, [{ file: 'Nutrition-Summary.csv', line: 4, message: 'The Dinner of 2026-06-22 gives no number and names no food; no meal was made for it.' }]);

  const daily = `${fx.cronometerDailySummary()}2026-06-07,Dinner,,,,,,,,false\n`;
  const cron = await parse([file('dailysummary.csv', daily)]);
  assert.deepEqual(cron.meals.map((m) => [m.mealType, m.calories]), [['breakfast', 400], ['lunch', 700]]);
  assert.deepEqual(cron.warnings, [{ file: 'dailysummary.csv', line: 5, message: 'The Dinner of 2026-06-07 gives no number and names no food; no meal was made for it.' }]);
});
