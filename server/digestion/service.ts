import type { AppContext } from '../app-context.js';
import { firstMealDays, listMealsBetween, listMealsByDays, type MealRecord } from '../db/meals.js';
import { getSleep, listSleepEndingBetween } from '../db/sleep.js';
import { nextTurn } from '../next-turn.js';
import {
  constants,
  dailyScoreInputWindows,
  dailyScores,
  datesBetween,
  insightEvidence,
  insightsFromEvidence,
  digestionWindows,
  digestiveState,
  stomachAt,
  insightsInputWindows,
  loggedDaysThrough,
  lowerBound,
  mealPhases,
  overnightInputWindows,
  overnightScores,
  stateInputWindow,
  timelineInputWindow,
  userDay,
  userDayBounds,
  windowsInputWindows,
  type DailyScore,
  type DigestionWindows,
  type DigestiveState,
  type EngineMeal,
  type EngineSettings,
  type EngineSleep,
  type InstantWindow,
  type Insight,
  type InsightEvidence,
  type InsightsInput,
  type MealPhases,
  type OvernightScore,
  type StomachMemo,
} from '../engine/index.js';
import { mealResource } from '../nutrition/meals.js';
import { addDays } from '../time/tz.js';
import { derivedCacheOf, nextInstantIn, usableCache, type CachedEntry, type DerivedCache } from './cache.js';
import { engineMeal, engineSettings, engineSleep } from './inputs.js';

/**
 * The digestion read side. Each result reads only the rows its engine computation needs (the
 * engine's input windows), so the cost follows the range asked for, not the length of history;
 * and each is served from the derived-data cache (cache.ts) when the service has one, computed
 * once per day and kept true by writes and time.
 *
 * Per-day results (a day's daily score, its overnight scores, its timeline entries) are each a
 * function of that day's own windows: `computeDay` is their definition, and a range is the list
 * of its days. Filling a range reads the rows once and hands each day its slice of them, so the
 * cached value is, by construction, what computeDay returns.
 */

export interface DigestionContext {
  settings: EngineSettings;
  now: number;
  today: string;
  /** End of today: "today" results are recomputed once it passes. */
  todayEnd: number;
  /** The first days with a logged meal (calibration; see DailyScoresInput.firstLoggedDays). */
  firstLoggedDays: readonly string[];
  /** The cache to read through, when there is one and no write transaction is open. */
  cache: DerivedCache | undefined;
  /** The service's memo of stomach runs (with its derived-data cache), inside a write transaction too. */
  stomachs: StomachMemo | undefined;
}

export function digestionContext(app: AppContext): DigestionContext {
  const settings = engineSettings(app);
  const now = app.clock.now();
  const today = userDay(now, settings);
  return {
    settings,
    now,
    today,
    todayEnd: userDayBounds(today, settings).end,
    // Calibration only distinguishes "fewer than CALIBRATION_MIN_DAYS days logged".
    firstLoggedDays: firstMealDays(app.db, constants.CALIBRATION_MIN_DAYS),
    cache: usableCache(app, now),
    stomachs: derivedCacheOf(app)?.stomachs,
  };
}

function daysWithDataThrough(ctx: DigestionContext, date: string): number {
  return loggedDaysThrough(ctx.firstLoggedDays, date);
}

function mealsIn(app: AppContext, w: InstantWindow): MealRecord[] {
  return listMealsBetween(app.db, w.from, w.to + 1);
}

function sleepsIn(app: AppContext, w: InstantWindow): EngineSleep[] {
  return listSleepEndingBetween(app.db, w.from, w.to + 1).map(engineSleep);
}

export function currentState(app: AppContext, ctx = digestionContext(app)): DigestiveState {
  return stateOf(mealsIn(app, stateInputWindow(ctx.now)).map(engineMeal), ctx);
}

/** The state from the meals of its input window (the engine leaves out any after now, once). */
function stateOf(inWindow: readonly EngineMeal[], ctx: DigestionContext): DigestiveState {
  return digestiveState(inWindow, ctx.now, { daysWithData: daysWithDataThrough(ctx, ctx.today) }, stomachAt(inWindow, ctx.now, ctx.stomachs));
}

export function currentWindows(app: AppContext, ctx = digestionContext(app)): DigestionWindows {
  return windowsOf(mealsIn(app, windowsInputWindows(ctx.now, ctx.settings).meals).map(engineMeal), app, ctx);
}

/** The windows from the meals of their input window. */
function windowsOf(meals: EngineMeal[], app: AppContext, ctx: DigestionContext): DigestionWindows {
  return digestionWindows({
    meals,
    sleeps: sleepsIn(app, windowsInputWindows(ctx.now, ctx.settings).sleeps),
    settings: ctx.settings,
    now: ctx.now,
    daysWithData: daysWithDataThrough(ctx, ctx.today),
    ...(ctx.stomachs ? { stomachs: ctx.stomachs } : {}),
  });
}

/**
 * The state and the windows together, as currentState and currentWindows give them, from one
 * read of the meals (the windows' input window holds the state's): what a meal write announces.
 */
export function currentStateAndWindows(app: AppContext, ctx = digestionContext(app)): { state: DigestiveState; windows: DigestionWindows } {
  const meals = mealsIn(app, windowsInputWindows(ctx.now, ctx.settings).meals).map(engineMeal);
  // Oldest first: the state's input window is a run of them.
  const w = stateInputWindow(ctx.now);
  const times = meals.map((m) => m.timestamp);
  return { state: stateOf(meals.slice(lowerBound(times, w.from), lowerBound(times, w.to + 1)), ctx), windows: windowsOf(meals, app, ctx) };
}

// ---------------------------------------------------------------------------------------------
// Rows of a window, sliced per day
// ---------------------------------------------------------------------------------------------

interface Windows {
  meals: InstantWindow;
  sleeps: InstantWindow;
}

/** Meals (oldest first) and sleep sessions (by end) of some windows, with their sort keys. */
interface Rows {
  records: MealRecord[];
  meals: EngineMeal[];
  mealTimes: number[];
  sleeps: EngineSleep[];
  sleepEnds: number[];
}

function readRows(app: AppContext, w: Windows): Rows {
  const records = mealsIn(app, w.meals);
  const sleeps = sleepsIn(app, w.sleeps);
  return { records, meals: records.map(engineMeal), mealTimes: records.map((m) => m.timestampMs), sleeps, sleepEnds: sleeps.map((s) => s.end) };
}

/** The rows of `rows` that lie in the narrower windows `w`. */
function sliceRows(rows: Rows, w: Windows): Rows {
  const m0 = lowerBound(rows.mealTimes, w.meals.from);
  const m1 = lowerBound(rows.mealTimes, w.meals.to + 1);
  const s0 = lowerBound(rows.sleepEnds, w.sleeps.from);
  const s1 = lowerBound(rows.sleepEnds, w.sleeps.to + 1);
  return {
    records: rows.records.slice(m0, m1),
    meals: rows.meals.slice(m0, m1),
    mealTimes: rows.mealTimes.slice(m0, m1),
    sleeps: rows.sleeps.slice(s0, s1),
    sleepEnds: rows.sleepEnds.slice(s0, s1),
  };
}

function hull(a: Windows, b: Windows): Windows {
  return {
    meals: { from: Math.min(a.meals.from, b.meals.from), to: Math.max(a.meals.to, b.meals.to) },
    sleeps: { from: Math.min(a.sleeps.from, b.sleeps.from), to: Math.max(a.sleeps.to, b.sleeps.to) },
  };
}

function settingsStamp(ctx: DigestionContext): string {
  return `${ctx.settings.timezone}|${ctx.settings.dayStart}`;
}

/**
 * How long a result computed now from `rows` in windows `w` stays true as time passes: until the
 * next meal or sleep end in the windows that is still ahead, or the end of today (days change
 * state then) — forever once the windows lie wholly in the past.
 */
function validUntil(rows: Rows, w: Windows, ctx: DigestionContext, timeDependent: boolean): number {
  if (!timeDependent || Math.max(w.meals.to, w.sleeps.to) <= ctx.now) return Infinity;
  return Math.min(nextInstantIn(rows.mealTimes, w.meals, ctx.now), nextInstantIn(rows.sleepEnds, w.sleeps, ctx.now), ctx.todayEnd);
}

// ---------------------------------------------------------------------------------------------
// Per-day results
// ---------------------------------------------------------------------------------------------

interface DayKind<T> {
  name: string;
  /** The engine's declared input windows for this one day; monotone in the date. */
  windows(date: string, ctx: DigestionContext): Windows;
  /** Every input besides the rows (checked on read). */
  stamp(date: string, ctx: DigestionContext): string;
  /** False when the result does not depend on `now` at all. */
  timeDependent: boolean;
  /** The result from exactly the rows in windows(date). */
  compute(date: string, rows: Rows, ctx: DigestionContext): T;
}

const dailyKind: DayKind<DailyScore> = {
  name: 'daily',
  windows: (date, ctx) => dailyScoreInputWindows(date, date, ctx.settings),
  stamp: (date, ctx) => `${settingsStamp(ctx)}|${daysWithDataThrough(ctx, date)}`,
  timeDependent: true,
  compute: (date, rows, ctx) =>
    dailyScores({
      startDate: date,
      endDate: date,
      meals: rows.meals,
      sleeps: rows.sleeps,
      settings: ctx.settings,
      now: ctx.now,
      firstLoggedDays: ctx.firstLoggedDays,
    })[0]!,
};

const overnightKind: DayKind<OvernightScore[]> = {
  name: 'overnight',
  windows: (date, ctx) => overnightInputWindows(date, date, ctx.settings),
  stamp: (_date, ctx) => settingsStamp(ctx),
  timeDependent: true,
  compute: (date, rows, ctx) =>
    overnightScores({ sleeps: rows.sleeps, meals: rows.meals, settings: ctx.settings, now: ctx.now, startDate: date, endDate: date }),
};

/** Timeline entries of the meals of one day (its stored `day`), newest first. */
const timelineKind: DayKind<MealPhases[]> = {
  name: 'timeline',
  windows: (date, ctx) => {
    const meals = timelineInputWindow(date, date, ctx.settings);
    return { meals, sleeps: { from: meals.from, to: meals.from - 1 } };
  },
  // Confidence is lowered while the user is calibrating, as of today.
  stamp: (_date, ctx) => `${settingsStamp(ctx)}|${daysWithDataThrough(ctx, ctx.today)}`,
  timeDependent: false,
  compute: (date, rows, ctx) => {
    const ofDay = new Set(rows.records.filter((m) => m.day === date).map((m) => m.id));
    return mealPhases(rows.meals, { daysWithData: daysWithDataThrough(ctx, ctx.today) }).filter((p) => ofDay.has(p.mealId));
  },
};

export const DAY_KINDS = { daily: dailyKind, overnight: overnightKind, timeline: timelineKind } as const;
export type DayKindName = keyof typeof DAY_KINDS;

/** The definition of a per-day result: computed from the rows of its own windows, no cache. */
export function computeDay<K extends DayKindName>(app: AppContext, kindName: K, date: string, ctx = digestionContext(app)) {
  const kind = DAY_KINDS[kindName] as DayKind<unknown>;
  return kind.compute(date, readRows(app, kind.windows(date, ctx)), ctx) as ReturnType<(typeof DAY_KINDS)[K]['compute']>;
}

function dayKey(kind: DayKind<unknown>, date: string): string {
  return `${kind.name}:${date}`;
}

/** The cached results of [dates[from], dates[to]], computing (and keeping) those missing. */
function fillDays<T>(app: AppContext, kind: DayKind<T>, dates: readonly string[], out: Array<T | undefined>, ctx: DigestionContext): void {
  let i = 0;
  while (i < dates.length) {
    if (out[i] !== undefined) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < dates.length && out[j + 1] === undefined) j++;
    // One read for the run of missing days; each day computes from its own slice.
    const rows = readRows(app, hull(kind.windows(dates[i]!, ctx), kind.windows(dates[j]!, ctx)));
    for (let k = i; k <= j; k++) {
      const date = dates[k]!;
      const w = kind.windows(date, ctx);
      const own = sliceRows(rows, w);
      const value = kind.compute(date, own, ctx);
      out[k] = value;
      ctx.cache?.set<T>(dayKey(kind, date), {
        value,
        meals: w.meals,
        sleeps: w.sleeps,
        validUntil: validUntil(own, w, ctx, kind.timeDependent),
        stamp: kind.stamp(date, ctx),
      } satisfies CachedEntry<T>);
    }
    i = j + 1;
  }
}

function cachedDays<T>(kind: DayKind<T>, dates: readonly string[], ctx: DigestionContext): Array<T | undefined> {
  return dates.map((date) => ctx.cache?.get<T>(dayKey(kind, date), kind.stamp(date, ctx), ctx.now));
}

function perDay<T>(app: AppContext, kind: DayKind<T>, startDate: string, endDate: string, ctx: DigestionContext): T[] {
  const dates = datesBetween(startDate, endDate);
  const out = cachedDays(kind, dates, ctx);
  fillDays(app, kind, dates, out, ctx);
  return out as T[];
}

export function dailyScoresRange(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): DailyScore[] {
  return perDay(app, dailyKind, startDate, endDate, ctx);
}

/** Overnight scores of the sleep sessions dated in [startDate, endDate], by date then sleep end. */
export function overnightRange(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): OvernightScore[] {
  return perDay(app, overnightKind, startDate, endDate, ctx).flat();
}

/** The overnight score of one sleep session, with its baseline from the nights before. */
export function overnightForSleep(app: AppContext, sleepId: string, ctx = digestionContext(app)): OvernightScore | undefined {
  const sleep = getSleep(app.db, sleepId);
  if (!sleep) return undefined;
  return overnightRange(app, sleep.day, sleep.day, ctx).find((o) => o.sleepId === sleepId);
}

/**
 * Timeline entries of the meals whose day lies in [startDate, endDate], newest first. Meals just
 * outside the range are read too, since they can share the stomach with meals inside it.
 */
export function timelineEntries(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): MealPhases[] {
  return perDay(app, timelineKind, startDate, endDate, ctx)
    .flat()
    .sort((a, b) => b.mealTime - a.mealTime || (a.mealId < b.mealId ? 1 : a.mealId > b.mealId ? -1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Insights: one result per range
// ---------------------------------------------------------------------------------------------

function insightsKey(startDate: string, endDate: string): string {
  return `insights:${startDate}:${endDate}`;
}

/** The definition of insights over a range: computed from the rows of its windows, no cache. */
export function computeInsights(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): Insight[] {
  return insightsFromRows(readRows(app, insightsInputWindows(startDate, endDate, ctx.settings)), startDate, endDate, ctx);
}

function insightsInput(rows: Rows, startDate: string, endDate: string, ctx: DigestionContext): InsightsInput {
  return { startDate, endDate, meals: rows.meals, sleeps: rows.sleeps, settings: ctx.settings, now: ctx.now };
}

function insightsFromRows(rows: Rows, startDate: string, endDate: string, ctx: DigestionContext): Insight[] {
  const input = insightsInput(rows, startDate, endDate, ctx);
  return insightsFromEvidence(insightEvidence(input, startDate, endDate));
}

export function insightsRangeFor(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): Insight[] {
  const key = insightsKey(startDate, endDate);
  const stamp = settingsStamp(ctx);
  const hit = ctx.cache?.get<Insight[]>(key, stamp, ctx.now);
  if (hit) return hit;
  const w = insightsInputWindows(startDate, endDate, ctx.settings);
  const rows = readRows(app, w);
  const value = insightsFromRows(rows, startDate, endDate, ctx);
  ctx.cache?.set(key, { value, meals: w.meals, sleeps: w.sleeps, validUntil: validUntil(rows, w, ctx, true), stamp });
  return value;
}

/** What a cache key stands for, recomputed from the rows (tests compare the two). */
export function computeForKey(app: AppContext, key: string, ctx = digestionContext(app)): unknown {
  const [kind, a, b] = key.split(':') as [string, string, string | undefined];
  if (kind === 'insights') return computeInsights(app, a, b!, ctx);
  if (kind === 'meals') return computeMealsJson(app, a, b!);
  if (!(kind in DAY_KINDS)) throw new Error(`unknown derived-data key ${key}`);
  return computeDay(app, kind as DayKindName, a, ctx);
}

// ---------------------------------------------------------------------------------------------
// The meals of a range, as the snapshot sends them
// ---------------------------------------------------------------------------------------------

/** A meal's day comes from the offset it was eaten at: up to 26 h from the user's zone. */
const MEAL_DAY_MARGIN_MS = 2 * 24 * 3600_000;

// TextEncoder rather than Buffer: the same code runs in the phone's worker.
const utf8 = new TextEncoder();

function mealsKey(startDate: string, endDate: string): string {
  return `meals:${startDate}:${endDate}`;
}

/** The definition: the meals whose day lies in [startDate, endDate] as resources, newest first, in JSON (UTF-8). */
export function computeMealsJson(app: AppContext, startDate: string, endDate: string): Uint8Array {
  return utf8.encode(JSON.stringify(listMealsByDays(app.db, startDate, endDate).reverse().map(mealResource)));
}

/**
 * The same, kept in the cache as bytes: a 90-day snapshot sends ~330 meals (190 KB), and reading,
 * parsing, mapping and serializing them again on every request was half of its cost and most of
 * its garbage. Callers must not modify the bytes: they are shared. The entry's meal window is the range's days with a margin for meals eaten at
 * another offset, so any meal written, edited or deleted near the range drops it; it does not
 * change as time passes.
 */
export function mealsJsonByDays(app: AppContext, startDate: string, endDate: string, ctx = digestionContext(app)): Uint8Array {
  const key = mealsKey(startDate, endDate);
  const stamp = settingsStamp(ctx);
  const hit = ctx.cache?.get<Uint8Array>(key, stamp, ctx.now);
  if (hit !== undefined) return hit;
  const value = computeMealsJson(app, startDate, endDate);
  const meals = {
    from: userDayBounds(startDate, ctx.settings).start - MEAL_DAY_MARGIN_MS,
    to: userDayBounds(endDate, ctx.settings).end + MEAL_DAY_MARGIN_MS,
  };
  ctx.cache?.set(key, { value, meals, sleeps: { from: Infinity, to: -Infinity }, validUntil: Infinity, stamp });
  return value;
}

// ---------------------------------------------------------------------------------------------
// Filling without holding the thread
// ---------------------------------------------------------------------------------------------

/** Days computed between two turns of the event loop: a few milliseconds of work. */
export const FILL_CHUNK_DAYS = 7;

export interface WarmSections {
  daily?: boolean;
  overnight?: boolean;
  timeline?: boolean;
  insights?: boolean;
}

/**
 * Fills the cache for [startDate, endDate] a week at a time, yielding to the event loop between
 * slices, so a first-time fill (a 90-day snapshot on an old database, everything after a time-zone
 * change) never keeps other requests waiting for more than a slice. Each slice reads, computes and
 * stores in one synchronous step, so a write between slices cannot leave a stale entry behind
 * (it invalidates what was stored before it; slices after it read the new rows). Callers then
 * read synchronously, which serves the filled entries and recomputes only what a write dropped
 * meanwhile. Without a cache (none attached) there is nothing to fill.
 */
export async function warmRange(app: AppContext, startDate: string, endDate: string, sections: WarmSections): Promise<void> {
  const dates = datesBetween(startDate, endDate);
  const kinds: Array<DayKind<unknown>> = [];
  if (sections.daily) kinds.push(dailyKind as DayKind<unknown>);
  if (sections.overnight) kinds.push(overnightKind as DayKind<unknown>);
  if (sections.timeline) kinds.push(timelineKind as DayKind<unknown>);
  // The usual case, everything already there: one look, no slices.
  const first = digestionContext(app);
  if (!first.cache) return;
  const missing = kinds.filter((kind) => cachedDays(kind, dates, first).some((v) => v === undefined));
  const insightsMissing = sections.insights === true && first.cache.get(insightsKey(startDate, endDate), settingsStamp(first), first.now) === undefined;
  if (missing.length === 0 && !insightsMissing) return;
  for (const kind of missing) {
    for (let i = 0; i < dates.length; i += FILL_CHUNK_DAYS) {
      const ctx = digestionContext(app);
      if (!ctx.cache) return;
      const slice = dates.slice(i, i + FILL_CHUNK_DAYS);
      const out = cachedDays(kind, slice, ctx);
      if (out.every((v) => v !== undefined)) continue;
      fillDays(app, kind, slice, out, ctx);
      await nextTurn();
    }
  }
  if (insightsMissing) await warmInsights(app, startDate, endDate);
}

/** Insights of a range, their evidence computed a slice of days at a time (see warmRange). */
async function warmInsights(app: AppContext, startDate: string, endDate: string): Promise<void> {
  const ctx = digestionContext(app);
  const cache = ctx.cache;
  if (!cache) return;
  const key = insightsKey(startDate, endDate);
  const stamp = settingsStamp(ctx);
  if (cache.get(key, stamp, ctx.now) !== undefined) return;
  const generation = cache.generation;
  const w = insightsInputWindows(startDate, endDate, ctx.settings);
  const rows = readRows(app, w);
  const input = insightsInput(rows, startDate, endDate, ctx);
  const evidence: InsightEvidence = { days: [], nights: [] };
  const dates = datesBetween(startDate, endDate);
  for (let i = 0; i < dates.length; i += FILL_CHUNK_DAYS) {
    await nextTurn();
    // A write since the rows were read: what they give is no longer true. Leave it to the reader.
    if (cache.generation !== generation) return;
    const part = insightEvidence(input, dates[i]!, dates[Math.min(i + FILL_CHUNK_DAYS, dates.length) - 1]!);
    evidence.days.push(...part.days);
    evidence.nights.push(...part.nights);
  }
  // Time passed while slicing: keep the result only if nothing it depends on changed meanwhile.
  const now = app.clock.now();
  const until = validUntil(rows, w, ctx, true);
  if (!cache.usable(now) || cache.generation !== generation || now >= until) return;
  cache.set(key, { value: insightsFromEvidence(evidence), meals: w.meals, sleeps: w.sleeps, validUntil: until, stamp });
}

/** What the app shows first (Today, the 90-day trend): filled in the background at start. */
export async function warmRecentDays(app: AppContext): Promise<void> {
  const { today } = digestionContext(app);
  await warmRange(app, addDays(today, -6), today, { timeline: true, insights: true });
  await warmRange(app, addDays(today, -13), today, { insights: true });
  await warmRange(app, addDays(today, -89), today, { daily: true, overnight: true });
}
