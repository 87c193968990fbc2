import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseImport, type ParseOutcome } from '../../server/imports/parse.js';
import { NUTRIENT_FIELDS, type Nutrients } from '../../server/imports/records.js';
import type { ImportedMeal, ImportedSleep } from '../../server/imports/types.js';
import * as fx from './fixtures.js';

/**
 * Properties of every importer: a number the file does not give is unknown (null), never 0, and
 * each number it gives is imported once. Where the file has its own daily totals (Cronometer's
 * dailysummary.csv), the imported meals of each day add up to them; where it has per-entry numbers
 * only, the meals add up to the entries. Values are generated in hundredths, as exports write them.
 */

const ZONE = 'Europe/Berlin';
const dir = mkdtempSync(join(tmpdir(), 'chyme-import-properties-'));
let n = 0;
function file(name: string, data: string): { path: string; name: string } {
  const path = join(dir, `${n++}-${name}`);
  writeFileSync(path, data);
  return { path, name };
}

function parse(files: Array<{ path: string; name: string }>): Promise<ParseOutcome> {
  return parseImport({ files, timeZone: ZONE, timeZoneExplicit: false });
}

type Field = keyof Nutrients;
/** A value in hundredths, or null for a cell the file leaves empty. */
type Cents = number | null;
type Values = Record<Field, Cents>;

const cents = (max: number) => fc.option(fc.integer({ min: 0, max }), { nil: null, freq: 3 });
const cell = (v: Cents) => (v === null ? '' : (v / 100).toFixed(2));
const addKnown = (a: Cents, b: Cents): Cents => (b === null ? a : (a ?? 0) + b);
const noValues = (): Values => ({ calories: null, proteinG: null, carbsG: null, fatG: null, fiberG: null, sodiumMg: null, caffeineMg: null });

/** The local day a meal was eaten on (its instant at the offset it was lived at). */
const localDay = (m: ImportedMeal) => new Date(m.timestampMs + m.utcOffsetMin * 60_000).toISOString().slice(0, 10);

/** Per day, the sum of each field the meals know, in hundredths (null where no meal knows it). */
function mealTotals(meals: ImportedMeal[]): Map<string, Values> {
  const out = new Map<string, Values>();
  for (const m of meals) {
    const day = localDay(m);
    const totals = out.get(day) ?? noValues();
    for (const f of NUTRIENT_FIELDS) totals[f] = addKnown(totals[f], m[f] === null ? null : Math.round(m[f] * 100));
    out.set(day, totals);
  }
  return out;
}

/** "8:05 AM" for a minute of the day, as Cronometer and MyFitnessPal write times. */
function clock(minute: number): string {
  const h = Math.floor(minute / 60);
  return `${h % 12 === 0 ? 12 : h % 12}:${String(minute % 60).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
}

// June 2026: no daylight-saving change in Berlin, so every local time exists once.
const DAYS = ['2026-06-01', '2026-06-02', '2026-06-03'];
const minuteOrNone = fc.option(fc.integer({ min: 0, max: 1439 }), { nil: null, freq: 4 });

// ---- Cronometer ------------------------------------------------------------------------------

const CRONOMETER_COLUMNS: Array<[header: string, field: Field]> = [
  ['Energy (kcal)', 'calories'],
  ['Caffeine (mg)', 'caffeineMg'],
  ['Sodium (mg)', 'sodiumMg'],
  ['Carbs (g)', 'carbsG'],
  ['Fiber (g)', 'fiberG'],
  ['Fat (g)', 'fatG'],
  ['Protein (g)', 'proteinG'],
];
const cronometerValues = fc.record(Object.fromEntries(CRONOMETER_COLUMNS.map(([, f]) => [f, cents(200_000)])) as Record<Field, fc.Arbitrary<Cents>>);

const cronometerGroup = fc.record({
  day: fc.constantFrom(...DAYS),
  label: fc.constantFrom('Breakfast', 'Lunch', 'Dinner', 'Snacks', 'Snack 1', 'Uncategorized'),
  entries: fc.array(
    fc.record({ minute: minuteOrNone, name: fc.constantFrom('Oats', 'Tea', 'Pasta', 'Apple', 'Soup'), values: cronometerValues, rank: fc.integer() }),
    { maxLength: 4 },
  ),
  /** The group's row in dailysummary.csv when it has no entries (narrow shape: also when it has). */
  daily: cronometerValues,
  /** Whether dailysummary.csv has a row for a group without entries (one with entries always has). */
  dailyWithoutEntries: fc.boolean(),
});

const cronometerExport = fc.record({
  wide: fc.boolean(),
  withDaily: fc.boolean(),
  groups: fc.uniqueArray(cronometerGroup, { selector: (g) => `${g.day} ${g.label}`, minLength: 1, maxLength: 10 }),
});

type CronometerExport = typeof cronometerExport extends fc.Arbitrary<infer T> ? T : never;

/** servings.csv and dailysummary.csv of a generated export, and the group rows written per day. */
function cronometerFiles(x: CronometerExport): { servings: string | null; daily: string | null; rowsByDay: Map<string, Values[]> } {
  const header = x.wide ? `Day,Time,Group,Food Name,Amount,${CRONOMETER_COLUMNS.map(([h]) => h).join(',')},Category` : 'Day,Time,Group,Food Name,Amount,Category';
  const entries = x.groups
    .flatMap((g) => g.entries.map((e) => ({ g, e })))
    .sort((a, b) => a.e.rank - b.e.rank) // Cronometer's rows are not time-sorted
    .map(({ g, e }) => {
      const cells = x.wide ? `${CRONOMETER_COLUMNS.map(([, f]) => cell(e.values[f])).join(',')},` : '';
      return `${g.day},${e.minute === null ? '' : clock(e.minute)},${g.label},${e.name},1.00 serving,${cells}Other`;
    });
  const rowsByDay = new Map<string, Values[]>();
  const dailyLines: string[] = [];
  for (const g of x.groups) {
    if (!x.withDaily || (g.entries.length === 0 && !g.dailyWithoutEntries)) continue;
    // A wide group's row sums its entries' present cells (empty when none has one).
    let row = g.daily;
    if (x.wide && g.entries.length > 0) {
      row = noValues();
      for (const e of g.entries) for (const f of NUTRIENT_FIELDS) row[f] = addKnown(row[f], e.values[f]);
    }
    rowsByDay.set(g.day, [...(rowsByDay.get(g.day) ?? []), row]);
    dailyLines.push(`${g.day},${g.label},${CRONOMETER_COLUMNS.map(([, f]) => cell(row[f])).join(',')},false`);
  }
  // The Total row of each day: Cronometer counts an empty cell as 0 in it.
  for (const [day, rows] of rowsByDay) {
    dailyLines.push(`${day},Total,${CRONOMETER_COLUMNS.map(([, f]) => cell(rows.reduce((s, r) => s + (r[f] ?? 0), 0))).join(',')},false`);
  }
  return {
    servings: entries.length > 0 ? [header, ...entries, ''].join('\n') : null,
    daily: dailyLines.length > 0 ? [`Date,Group,${CRONOMETER_COLUMNS.map(([h]) => h).join(',')},Completed`, ...dailyLines, ''].join('\n') : null,
    rowsByDay,
  };
}

test('Cronometer: each day\'s meals add up to the file\'s daily totals (on every day the import covers), unknown stays null, and no meal holds nothing', async () => {
  await fc.assert(
    fc.asyncProperty(cronometerExport, async (x) => {
      const { servings, daily, rowsByDay } = cronometerFiles(x);
      fc.pre(servings !== null || daily !== null);
      const out = await parse([...(servings ? [file('servings.csv', servings)] : []), ...(daily ? [file('dailysummary.csv', daily)] : [])]);
      const got = mealTotals(out.meals);

      // What each day should hold: a wide group's entries, else its row in dailysummary.csv. With
      // servings.csv, a day it has no entry on is left out (that period's servings.csv brings it).
      const servingsDays = new Set(x.groups.filter((g) => g.entries.length > 0).map((g) => g.day));
      const covered = (day: string) => servings === null || servingsDays.has(day);
      const expected = new Map<string, Values>();
      for (const g of x.groups) {
        if (!covered(g.day)) continue;
        const totals = expected.get(g.day) ?? noValues();
        const hasRow = x.withDaily && (g.entries.length > 0 || g.dailyWithoutEntries);
        for (const f of NUTRIENT_FIELDS) {
          if (x.wide && g.entries.length > 0) for (const e of g.entries) totals[f] = addKnown(totals[f], e.values[f]);
          else if (hasRow) totals[f] = addKnown(totals[f], g.daily[f]);
        }
        expected.set(g.day, totals);
      }
      for (const day of DAYS) {
        const want = expected.get(day) ?? noValues();
        const have = got.get(day) ?? noValues();
        assert.deepEqual(have, want, `the meals of ${day}`);
        // The file's own Total row (missing counted as 0) says the same wherever a meal knows the value.
        const rows = covered(day) ? rowsByDay.get(day) : undefined;
        if (rows) for (const f of NUTRIENT_FIELDS) assert.equal(have[f] ?? 0, rows.reduce((s, r) => s + (r[f] ?? 0), 0), `${f} of ${day} against its Total row`);
      }
      for (const m of out.meals) {
        const knows = NUTRIENT_FIELDS.some((f) => m[f] !== null);
        assert.ok(knows || /Oats|Tea|Pasta|Apple|Soup/.test(m.description), `a meal at ${new Date(m.timestampMs).toISOString()} holds no number and names no food`);
      }
      if (!x.wide && daily !== null) {
        // Narrow shape with its totals: one meal per group and day, whatever the times of its foods.
        const groupsWithMeals = x.groups.filter(
          (g) => g.entries.length > 0 || (covered(g.day) && g.dailyWithoutEntries && NUTRIENT_FIELDS.some((f) => g.daily[f] !== null)),
        );
        assert.equal(out.meals.length, groupsWithMeals.length);
      }
    }),
    { numRuns: 150 },
  );
});

// ---- MyFitnessPal ----------------------------------------------------------------------------

const MFP_COLUMNS: Array<[header: string, field: Field]> = [
  ['Calories', 'calories'],
  ['Fat (g)', 'fatG'],
  ['Sodium (mg)', 'sodiumMg'],
  ['Carbohydrates (g)', 'carbsG'],
  ['Fiber', 'fiberG'],
  ['Protein (g)', 'proteinG'],
];
const MFP_HEADER =
  'Date,Meal,Time,Calories,Fat (g),Saturated Fat,Polyunsaturated Fat,Monounsaturated Fat,Trans Fat,Cholesterol,Sodium (mg),Potassium,Carbohydrates (g),Fiber,Sugar,Protein (g),Vitamin A,Vitamin C,Calcium,Iron,Note';

const mfpRow = fc.record({
  day: fc.constantFrom(...DAYS),
  meal: fc.constantFrom('Breakfast', 'Lunch', 'Dinner', 'Snacks', 'Post-Workout'),
  minute: minuteOrNone,
  // Now and then a row with every cell empty: it gives nothing, so it adds nothing.
  values: fc.oneof(
    { weight: 4, arbitrary: fc.record(Object.fromEntries(MFP_COLUMNS.map(([, f]) => [f, cents(300_000)])) as Record<Field, fc.Arbitrary<Cents>>) },
    { weight: 1, arbitrary: fc.constant(noValues()) },
  ),
  /** Vitamin A, Vitamin C, Calcium, Iron: % of daily value, never an amount. */
  percentDv: fc.integer({ min: 0, max: 150 }),
});

test('MyFitnessPal: each day\'s meals add up to the file\'s rows, %DV columns never count, and unknown stays null', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(mfpRow, { minLength: 1, maxLength: 12 }), fc.boolean(), async (rows, withTime) => {
      const header = withTime ? MFP_HEADER : MFP_HEADER.replace(',Time,', ',');
      const lines = rows.map((r) => {
        const v = (f: Field) => cell(r.values[f]);
        const time = withTime ? `${r.minute === null ? '' : clock(r.minute)},` : '';
        const dv = String(r.percentDv);
        return `${r.day},${r.meal},${time}${v('calories')},${v('fatG')},1,1,1,0,20,${v('sodiumMg')},300,${v('carbsG')},${v('fiberG')},5,${v('proteinG')},${dv},${dv},${dv},${dv},`;
      });
      const out = await parse([file('Nutrition-Summary.csv', [header, ...lines, ''].join('\r\n'))]);
      const got = mealTotals(out.meals);
      for (const day of DAYS) {
        const want = noValues();
        for (const r of rows.filter((row) => row.day === day)) for (const [, f] of MFP_COLUMNS) want[f] = addKnown(want[f], r.values[f]);
        assert.deepEqual(got.get(day) ?? noValues(), want, `the meals of ${day}`);
      }
      assert.ok(out.meals.every((m) => m.caffeineMg === null), 'MyFitnessPal has no caffeine column: unknown, not 0');
      assert.ok(out.meals.every((m) => NUTRIENT_FIELDS.some((f) => m[f] !== null)), 'no meal holds nothing');
    }),
    { numRuns: 150 },
  );
});

// ---- Apple Health ----------------------------------------------------------------------------

const APPLE_TYPES: Array<[type: string, field: Field, units: Array<[unit: string, perCent: number]>]> = [
  ['EnergyConsumed', 'calories', [['kcal', 0.01], ['Cal', 0.01], ['kJ', 0.04184]]],
  ['Protein', 'proteinG', [['g', 0.01], ['mg', 10]]],
  ['Carbohydrates', 'carbsG', [['g', 0.01]]],
  ['FatTotal', 'fatG', [['g', 0.01]]],
  ['Fiber', 'fiberG', [['g', 0.01], ['mg', 10]]],
  ['Sodium', 'sodiumMg', [['mg', 0.01], ['g', 0.00001]]],
  ['Caffeine', 'caffeineMg', [['mg', 0.01]]],
];

const appleEntry = fc.record({
  source: fc.constantFrom('FoodNoms', 'Lifesum'),
  shape: fc.constantFrom('correlation', 'loose', 'loose-named'),
  name: fc.constantFrom('Bagel', 'Soup', 'Espresso'),
  /** One unit per entry (index into the type's units) and a value per type, or none. */
  unit: fc.nat(),
  /** Per type: a value, none, or a record whose value attribute is empty (unreadable, so unknown). */
  values: fc.tuple(...APPLE_TYPES.map(() => fc.oneof({ weight: 6, arbitrary: cents(200_000) }, { weight: 1, arbitrary: fc.constant('blank' as const) }))),
});

test('Apple Health: the meals add up to the dietary records (each counted once, whatever the shape), and a type never recorded stays null', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(appleEntry, { minLength: 1, maxLength: 8 }), fc.array(fc.integer({ min: 0, max: 3 * 1440 - 1 }), { minLength: 8, maxLength: 8 }), async (entries, starts) => {
      fc.pre(entries.some((e) => e.values.some((v) => typeof v === 'number')));
      const want = noValues();
      const xml = entries
        .map((e, i) => {
          // Distinct starts: one app's records at one instant are one food.
          const at = new Date(Date.parse('2026-06-01T00:00:00Z') + (starts[i]! * 8 + i) * 60_000).toISOString();
          const records = APPLE_TYPES.flatMap(([type, field, units], t) => {
            const v = e.values[t]!;
            if (v === null) return [];
            const [unit, perCent] = units[e.unit % units.length]!;
            const meta: Record<string, string> = e.shape === 'loose-named' ? { HKFoodType: e.name } : {};
            if (v === 'blank') return [fx.dietRec(e.source, type, unit, 0, at, meta).replace(' value="0"', ' value=""')];
            want[field] = addKnown(want[field], v);
            return [fx.dietRec(e.source, type, unit, Number((v * perCent).toPrecision(12)), at, meta)];
          });
          if (e.shape !== 'correlation' || records.length === 0) return records.join('');
          // A correlation's children also appear at the top level (the DTD says so): counted once.
          const d = fx.appleDate(at);
          return `${records.join('')}<Correlation type="HKCorrelationTypeIdentifierFood" sourceName="${e.source}" startDate="${d}" endDate="${d}">\n  <MetadataEntry key="HKFoodType" value="${e.name}"/>\n${records.join('')}</Correlation>\n`;
        })
        .join('');
      const doc = `<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n${xml}</HealthData>\n`;
      const out = await parse([file('export.xml', doc)]);
      for (const w of out.warnings) assert.match(w.message, /has an unreadable value/);
      const have: Record<Field, number | null> = noValues();
      for (const m of out.meals) for (const f of NUTRIENT_FIELDS) have[f] = m[f] === null ? have[f] : (have[f] ?? 0) + m[f];
      for (const f of NUTRIENT_FIELDS) {
        if (want[f] === null) assert.equal(have[f], null, `${f} was never recorded: null, not 0`);
        // Converted units (kJ, mg) come back to within a hundredth per record.
        else assert.ok(have[f] !== null && Math.abs(have[f]! * 100 - want[f]!) <= entries.length, `${f}: ${have[f]} against ${want[f]! / 100}`);
      }
      assert.ok(out.meals.every((m) => NUTRIENT_FIELDS.some((f) => m[f] !== null)), 'no meal holds nothing');
    }),
    { numRuns: 100 },
  );
});

// ---- Sleep: Oura, Fitbit, Google Health ------------------------------------------------------

/** One night per day from 2026-07-01, 23:00 to 07:00 local, with each number given or not. */
const night = fc.record({
  efficiency: fc.option(fc.integer({ min: 0, max: 100 }), { nil: null }),
  asleepMin: fc.option(fc.integer({ min: 0, max: 480 }), { nil: null }),
  /** Sleep stages (Oura's 5-minute phases, Fitbit's levels, Google's stages file), or none. */
  stages: fc.boolean(),
});

function assertNights(sleeps: ImportedSleep[], nights: Array<{ efficiency: number | null; asleepMin: number | null; stages: boolean }>, efficiencyOf: (n: (typeof nights)[number]) => number | null): void {
  assert.equal(sleeps.length, nights.length);
  sleeps.forEach((s, i) => {
    const n = nights[i]!;
    assert.equal(s.efficiency, efficiencyOf(n), `night ${i}: efficiency`);
    assert.equal(s.asleepMs, n.asleepMin === null ? null : n.asleepMin * 60_000, `night ${i}: time asleep`);
    assert.equal(s.awakenings === null, !n.stages, `night ${i}: awakenings known only from stages`);
  });
}

test('Oura, Fitbit and Google Health: a number a night does not give is null, never 0', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(night, { minLength: 1, maxLength: 4 }), async (nights) => {
      const day = (i: number) => `2026-07-${String(i + 1).padStart(2, '0')}`;
      const next = (i: number) => `2026-07-${String(i + 2).padStart(2, '0')}`;

      const oura = nights.map((n, i) => ({
        id: `oura-${i}`,
        type: 'long_sleep',
        bedtime_start: `${day(i)}T23:00:00.000+02:00`,
        bedtime_end: `${next(i)}T07:00:00.000+02:00`,
        ...(n.efficiency === null ? {} : { efficiency: n.efficiency }),
        ...(n.asleepMin === null ? {} : { total_sleep_duration: n.asleepMin * 60 }),
        ...(n.stages ? { sleep_phase_5_min: '4112233411224' } : {}),
      }));
      const ouraOut = await parse([file('sleep.json', JSON.stringify({ data: oura }))]);
      assertNights(ouraOut.sleeps, nights, (n) => (n.efficiency === null ? null : n.efficiency / 100));

      const fitbit = nights.map((n, i) => ({
        logId: 5000 + i,
        dateOfSleep: next(i),
        startTime: `${day(i)}T23:00:00.000`,
        endTime: `${next(i)}T07:00:00.000`,
        mainSleep: true,
        type: n.stages ? 'stages' : 'classic',
        ...(n.efficiency === null ? {} : { efficiency: n.efficiency }),
        ...(n.asleepMin === null ? {} : { minutesAsleep: n.asleepMin }),
        ...(n.stages
          ? { levels: { data: [{ dateTime: `${day(i)}T23:00:00.000`, level: 'light', seconds: 14_400 }, { dateTime: `${next(i)}T03:00:00.000`, level: 'deep', seconds: 14_400 }] } }
          : {}),
      }));
      const fitbitOut = await parse([file('sleep-2026-07-01.json', JSON.stringify(fitbit))]);
      assertNights(fitbitOut.sleeps, nights, (n) => (n.efficiency === null ? null : n.efficiency / 100));

      // Google Health gives minutes, not an efficiency: it is minutes asleep over the sleep period.
      const users = nights.map(
        (n, i) =>
          `g-${i},STAGES,480,0,5,${n.asleepMin ?? ''},,,,+02:00,${day(i)} 21:00:00+0000,+02:00,${next(i)} 05:00:00+0000,FITBIT,sleep_session_v2,,`,
      );
      const stages = nights.flatMap((n, i) => (n.stages ? [`g-${i},1,LIGHT,+02:00,${day(i)} 21:00:00+0000,+02:00,${next(i)} 05:00:00+0000,FITBIT,sleep_session_v2,,`] : []));
      const googleOut = await parse([
        file('UserSleeps_2026-07-01.csv', [fx.GOOGLE_USERSLEEPS_HEADER, ...users, ''].join('\n')),
        ...(stages.length > 0 ? [file('UserSleepStages_2026-07-01.csv', [fx.GOOGLE_STAGES_HEADER, ...stages, ''].join('\n'))] : []),
      ]);
      assertNights(googleOut.sleeps, nights, (n) => (n.asleepMin === null ? null : Math.round((n.asleepMin / 480) * 1000) / 1000));
    }),
    { numRuns: 60 },
  );
});
