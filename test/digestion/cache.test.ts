import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { derivedCacheOf } from '../../server/digestion/cache.js';
import {
  computeDay,
  computeForKey,
  computeInsights,
  dailyScoresRange,
  digestionContext,
  insightsRangeFor,
  mealsJsonByDays,
  overnightRange,
  timelineEntries,
  type DayKindName,
} from '../../server/digestion/service.js';
import { ImportDocumentSchema, importDocument } from '../../server/export/export.js';
import { buildMeal, createMeal, patchMeal, removeMeal } from '../../server/nutrition/meals.js';
import { currentSettings, updateSettings } from '../../server/settings.js';
import { buildSleep, createSleep, removeSleep, SleepOverlapError } from '../../server/sleep/sessions.js';
import { addDays } from '../../server/time/tz.js';
import { createAppContext, type AppContext } from '../../server/app-context.js';
import { openDatabase } from '../../server/db/connection.js';
import { insertImportWrite } from '../../server/db/imports.js';
import { insertMeal } from '../../server/db/meals.js';
import { findOverlappingSleep, insertSleep } from '../../server/db/sleep.js';
import { writeSlice } from '../../server/imports/imports.js';
import { silentLogger } from '../../server/logger.js';
import { startTestService, TEST_NOW, type TestService } from '../helpers/service.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Every instant the steps use lies in [T0 − 20 days, T0 + 2 days]; the clock roams the same span. */
const T0 = TEST_NOW;
const instant = fc.integer({ min: -20 * 24 * 60, max: 2 * 24 * 60 }).map((m) => T0 + m * MINUTE);
const kcal = fc.oneof(fc.integer({ min: 0, max: 1200 }), fc.constant(10));
const mealType = fc.constantFrom('breakfast', 'lunch', 'dinner', 'snack' as const);
const offset = fc.option(fc.constantFrom(-600, -300, 0, 60, 540), { nil: null });

type Step =
  | { op: 'addMeal'; at: number; kcal: number; type: 'breakfast' | 'lunch' | 'dinner' | 'snack'; caffeine: number | null; offset: number | null }
  | { op: 'editMeal'; pick: number; at: number | null; kcal: number | null }
  | { op: 'deleteMeal'; pick: number }
  | { op: 'addSleep'; at: number; hours: number; efficiency: number | null }
  | { op: 'deleteSleep'; pick: number }
  | { op: 'import'; meals: Array<{ at: number; kcal: number }>; sleeps: Array<{ at: number; hours: number }> }
  | { op: 'settings'; timezone: string; dayStart: string }
  /**
   * A transaction of an import's worker, on a connection of its own: told (it says what it wrote,
   * as the worker does), read before it is told (a request between its commit and its report), or
   * never told (another program).
   */
  | { op: 'foreign'; meals: Array<{ at: number; kcal: number }>; sleeps: Array<{ at: number; hours: number }>; report: 'told' | 'read first' | 'never' }
  | { op: 'clock'; byMin: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('addMeal' as const), at: instant, kcal, type: mealType, caffeine: fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }), offset }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('editMeal' as const), pick: fc.nat(), at: fc.option(instant, { nil: null }), kcal: fc.option(kcal, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteMeal' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('addSleep' as const), at: instant, hours: fc.integer({ min: 1, max: 10 }), efficiency: fc.option(fc.double({ min: 0.5, max: 1, noNaN: true }), { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteSleep' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('import' as const),
      meals: fc.array(fc.record({ at: instant, kcal }), { maxLength: 4 }),
      sleeps: fc.array(fc.record({ at: instant, hours: fc.integer({ min: 2, max: 9 }) }), { maxLength: 2 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('foreign' as const),
      meals: fc.array(fc.record({ at: instant, kcal }), { maxLength: 4 }),
      sleeps: fc.array(fc.record({ at: instant, hours: fc.integer({ min: 2, max: 9 }) }), { maxLength: 2 }),
      report: fc.constantFrom('told' as const, 'read first' as const, 'never' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('settings' as const), timezone: fc.constantFrom('Europe/Berlin', 'America/New_York', 'Asia/Tokyo'), dayStart: fc.constantFrom('00:00', '04:00') }) },
  // Mostly forward, across meals, sleep ends and day changes; sometimes back.
  { weight: 3, arbitrary: fc.record({ op: fc.constant('clock' as const), byMin: fc.oneof(fc.integer({ min: 1, max: 36 * 60 }), fc.integer({ min: -12 * 60, max: 0 })) }) },
);

let ids = 0;
const uniqueId = (prefix: string) => `${prefix}_prop${++ids}`;

/** The import worker's side of a test: its own connection to the file, and how far it has reported. */
interface Worker {
  app: AppContext;
  told: number;
}

function openWorker(t: TestService): Worker {
  const db = openDatabase(t.service.app.db.name, { optimize: false });
  return { app: createAppContext(db, t.clock, silentLogger), told: 0 };
}

/** An import's records, one step each, as the worker writes them (listed in import_writes); never done within a slice. */
function* workerSteps(w: Worker, s: Extract<Step, { op: 'foreign' }>, meals: string[], sleeps: string[]): Generator<void, void> {
  const importId = uniqueId('imp');
  const now = w.app.clock.now();
  for (const m of s.meals) {
    const meal = buildMeal(currentSettings(w.app), { timestampMs: m.at, utcOffsetMin: null, mealType: 'snack', macros: { calories: m.kcal } }, { id: uniqueId('meal'), createdMs: now, updatedMs: now });
    insertMeal(w.app.db, meal);
    insertImportWrite(w.app.db, importId, 'meal', meal.id);
    meals.push(meal.id);
    yield;
  }
  for (const x of s.sleeps) {
    // A skipped record is a step too: the slice takes exactly one step per record (minSteps), and
    // one short would run the generator to its end, which a slice reports as 'everything'.
    if (findOverlappingSleep(w.app.db, x.at, x.at + x.hours * HOUR)) {
      yield;
      continue;
    }
    const sleep = buildSleep(w.app, { startMs: x.at, endMs: x.at + x.hours * HOUR }, uniqueId('sleep'), now);
    insertSleep(w.app.db, sleep);
    insertImportWrite(w.app.db, importId, 'sleep', sleep.id);
    sleeps.push(sleep.id);
    yield;
  }
  yield;
}

function apply(t: TestService, s: Step, meals: string[], sleeps: string[], worker: () => Worker): void {
  const app = t.service.app;
  switch (s.op) {
    case 'foreign': {
      const cache = derivedCacheOf(app)!;
      const w = worker();
      if (s.report !== 'never') cache.foreignWriteBegins();
      // Every record in one transaction (minSteps), which reports its instants, as each of the worker's does.
      const slice = writeSlice(w.app.db, workerSteps(w, s, meals, sleeps), w.told, 0, s.meals.length + s.sleeps.length);
      w.told = slice.told;
      assert.notEqual(slice.change, 'everything');
      if (s.report === 'read first') {
        assertCacheTrue(app, `a read between the worker's commit and its report ${JSON.stringify(s)}`);
        readAll(app);
      }
      if (s.report !== 'never') cache.foreignWriteCommitted(slice.change);
      return;
    }
    case 'addMeal':
      meals.push(
        createMeal(app, {
          timestampMs: s.at,
          utcOffsetMin: s.offset,
          mealType: s.type,
          macros: { calories: s.kcal },
          micros: { caffeine_mg: s.caffeine },
        }).id,
      );
      return;
    case 'editMeal': {
      if (meals.length === 0) return;
      const id = meals[s.pick % meals.length]!;
      patchMeal(app, id, { ...(s.at !== null ? { timestampMs: s.at, utcOffsetMin: null } : {}), ...(s.kcal !== null ? { macros: { calories: s.kcal } } : {}) });
      return;
    }
    case 'deleteMeal': {
      if (meals.length === 0) return;
      removeMeal(app, meals.splice(s.pick % meals.length, 1)[0]!);
      return;
    }
    case 'addSleep':
      try {
        sleeps.push(createSleep(app, { startMs: s.at, endMs: s.at + s.hours * HOUR, efficiency: s.efficiency }).id);
      } catch (err) {
        if (!(err instanceof SleepOverlapError)) throw err;
      }
      return;
    case 'deleteSleep': {
      if (sleeps.length === 0) return;
      removeSleep(app, sleeps.splice(s.pick % sleeps.length, 1)[0]!);
      return;
    }
    case 'import': {
      const doc = ImportDocumentSchema.parse({
        format: 'chyme.export',
        format_version: 1,
        meals: s.meals.map((m) => ({ id: uniqueId('meal'), timestamp: new Date(m.at).toISOString(), meal_type: 'snack', macros: { calories: m.kcal } })),
        sleep_sessions: s.sleeps.map((x) => ({ id: uniqueId('sleep'), start: new Date(x.at).toISOString(), end: new Date(x.at + x.hours * HOUR).toISOString() })),
      });
      importDocument(app, doc);
      meals.push(...doc.meals.map((m) => m.id));
      sleeps.push(...doc.sleep_sessions.map((x) => x.id));
      return;
    }
    case 'settings':
      updateSettings(app, { timezone: s.timezone, dayStart: s.dayStart });
      return;
    case 'clock':
      t.clock.set(Math.min(T0 + 10 * DAY, Math.max(T0 - 2 * DAY, t.clock.now() + s.byMin * MINUTE)));
      return;
  }
}

/** Reads through the cache as the API does, so that it holds entries of every kind. */
function readAll(app: AppContext): void {
  const { today } = digestionContext(app);
  dailyScoresRange(app, addDays(today, -13), today);
  dailyScoresRange(app, addDays(today, -24), addDays(today, -10));
  overnightRange(app, addDays(today, -13), today);
  timelineEntries(app, addDays(today, -6), addDays(today, 1));
  insightsRangeFor(app, addDays(today, -13), today);
  insightsRangeFor(app, addDays(today, -6), today);
  mealsJsonByDays(app, addDays(today, -13), today);
  mealsJsonByDays(app, addDays(today, -2), addDays(today, 1));
}

/** Every cached result, as served now, equals a fresh computation from the rows. */
function assertCacheTrue(app: AppContext, context: string): number {
  const cache = derivedCacheOf(app)!;
  const keys = cache.keys();
  for (const key of keys) {
    const [kind, a, b] = key.split(':') as [string, string, string | undefined];
    const served =
      kind === 'insights'
        ? insightsRangeFor(app, a, b!)
        : kind === 'meals'
          ? mealsJsonByDays(app, a, b!)
          : kind === 'daily'
          ? dailyScoresRange(app, a, a)[0]
          : kind === 'overnight'
            ? overnightRange(app, a, a)
            : timelineEntries(app, a, a);
    assert.deepEqual(served, computeForKey(app, key), `${key} after ${context}`);
  }
  // Ranges too: a range is its days, in order.
  const { today } = digestionContext(app);
  const from = addDays(today, -13);
  const days = Array.from({ length: 14 }, (_, i) => addDays(from, i));
  assert.deepEqual(dailyScoresRange(app, from, today), days.map((d) => computeDay(app, 'daily', d)), `daily range after ${context}`);
  assert.deepEqual(overnightRange(app, from, today), days.flatMap((d) => computeDay(app, 'overnight', d)), `overnight range after ${context}`);
  assert.deepEqual(insightsRangeFor(app, from, today), computeInsights(app, from, today), `insights after ${context}`);
  return keys.length;
}

/**
 * Sequences the property once found failing, run first every time. The first (seed 364400286 on a
 * loaded machine): a foreign write whose sleep overlaps one already there took one step fewer than
 * it has records, so its one transaction ran to the end (reported 'everything'), a defect of this
 * test's worker, not of the cache.
 */
const REGRESSIONS: Array<[Step[]]> = [
  [
    [
      { op: 'import', meals: [], sleeps: [{ at: 1795289040000, hours: 2 }] },
      { op: 'foreign', meals: [], sleeps: [{ at: 1795287240000, hours: 2 }, { at: 1795260300000, hours: 8 }], report: 'told' },
      { op: 'addMeal', at: 1795051200000, kcal: 10, type: 'snack', caffeine: 23, offset: 540 },
      { op: 'settings', timezone: 'Asia/Tokyo', dayStart: '00:00' },
      { op: 'clock', byMin: -366 },
      { op: 'clock', byMin: -369 },
      { op: 'foreign', meals: [{ at: 1794160980000, kcal: 10 }], sleeps: [{ at: 1793984400000, hours: 3 }], report: 'told' },
    ],
  ],
];

describe('derived-data cache', () => {
  test('after any sequence of writes, imports, settings changes and clock moves, every cached result equals a fresh computation', async () => {
    let checkedEntries = 0;
    // A counterexample is printed the moment it is found, and shrinking it stops after a bound:
    // each try starts a service, so shrinking a long sequence on a loaded machine can outlast CI.
    const seed = Number(process.env.CACHE_PROPERTY_SEED ?? (Date.now() ^ (Math.random() * 2 ** 31)) | 0);
    let firstFailure = true;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 18 }), async (steps) => {
        const t = await startTestService({ schedulerIntervalMs: 3600_000 });
        let w: Worker | undefined;
        try {
          const meals: string[] = [];
          const sleeps: string[] = [];
          readAll(t.service.app);
          for (const [i, s] of steps.entries()) {
            apply(t, s, meals, sleeps, () => (w ??= openWorker(t)));
            checkedEntries += assertCacheTrue(t.service.app, `step ${i} ${JSON.stringify(s)}`);
            readAll(t.service.app);
          }
        } catch (err) {
          if (firstFailure) {
            firstFailure = false;
            console.error(`cache property: seed ${seed} found a failing sequence (shrinking it now):\n${JSON.stringify(steps)}\n${String(err)}`);
          }
          throw err;
        } finally {
          w?.app.db.close();
          await t.stop();
        }
      }),
      {
        seed,
        examples: REGRESSIONS,
        numRuns: Number(process.env.CACHE_PROPERTY_RUNS ?? 40),
        plugins: [fc.interruptAfterTimeLimit(Number(process.env.CACHE_PROPERTY_LIMIT_MS ?? 10 * 60_000))],
      },
    );
    assert.ok(checkedEntries > 1000, `the property compared ${checkedEntries} cached entries`);
  });

  test("an import worker's commit, once reported, drops only the days it touches; one nobody reports drops everything", async () => {
    const t = await startTestService();
    let w: Worker | undefined;
    try {
      const app = t.service.app;
      const { today } = digestionContext(app);
      const cache = derivedCacheOf(app)!;
      const readDays = () => {
        dailyScoresRange(app, addDays(today, -59), today);
        timelineEntries(app, addDays(today, -59), today);
        return new Set(cache.keys());
      };
      const before = new Map([...readDays()].map((k) => [k, cache.peek(k)]));
      w = openWorker(t);
      const write = (report: 'told' | 'never') => {
        const s = { op: 'foreign' as const, meals: [{ at: T0 - 30 * DAY, kcal: 600 }], sleeps: [], report };
        if (report === 'told') cache.foreignWriteBegins();
        const slice = writeSlice(w!.app.db, workerSteps(w!, s, [], []), w!.told, 0, 1);
        w!.told = slice.told;
        if (report === 'told') cache.foreignWriteCommitted(slice.change);
      };
      write('told');
      const kept = [...before].filter(([k, entry]) => cache.peek(k) === entry).map(([k]) => k);
      // The same days as the same meal written by this connection (the test below): 17 daily scores, 5 timelines.
      assert.equal(before.size - kept.length, 17 + 5);
      const entry = cache.peek(kept[0]!);
      write('never');
      readDays();
      assert.notEqual(cache.peek(kept[0]!), entry, 'a commit nobody reported drops every entry');
    } finally {
      w?.app.db.close();
      await t.stop();
    }
  });

  test('a write invalidates only the days whose input windows it touches', async () => {
    const t = await startTestService();
    try {
      const app = t.service.app;
      const { today } = digestionContext(app);
      dailyScoresRange(app, addDays(today, -59), today);
      timelineEntries(app, addDays(today, -59), today);
      const cache = derivedCacheOf(app)!;
      const before = new Set(cache.keys());
      createMeal(app, { timestampMs: T0 - 30 * DAY, utcOffsetMin: null, mealType: 'lunch', macros: { calories: 600 } });
      const dropped = [...before].filter((k) => !cache.keys().includes(k));
      const kinds = (kind: DayKindName) => dropped.filter((k) => k.startsWith(`${kind}:`)).map((k) => k.slice(kind.length + 1)).sort();
      const mealDay = addDays(today, -30);
      // Daily scores read the 15 days before a day and the day after it: the meal's day, the day
      // before it, and the 15 after it.
      assert.deepEqual(kinds('daily'), Array.from({ length: 17 }, (_, i) => addDays(mealDay, i - 1)));
      // Timelines read their days' meals (up to 26 h outside their bounds, for meals eaten at
      // another offset) and 24 h on either side: 50 h, two days each way.
      assert.deepEqual(kinds('timeline'), [-2, -1, 0, 1, 2].map((d) => addDays(mealDay, d)));
      assert.equal(cache.keys().length, before.size - dropped.length);
      assert.ok(before.size - dropped.length >= 2 * 60 - 17 - 5, 'the other days stay cached');
    } finally {
      await t.stop();
    }
  });
});
