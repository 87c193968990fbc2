import type { Db } from '../server/db/connection.js';
import { insertMeal, type MealRecord } from '../server/db/meals.js';
import { insertSleep, type SleepRecord } from '../server/db/sleep.js';
import { mealDay } from '../server/engine/days.js';
import { addDays, dayOf, localTimeToInstant, offsetMinutes } from '../server/time/tz.js';
import { mealResource } from '../server/nutrition/meals.js';
import { sleepResource } from '../server/sleep/sessions.js';
import { prng } from '../test/helpers/random.js';

const MEALS: Array<{ type: MealRecord['mealType']; clock: number; kcal: number }> = [
  { type: 'breakfast', clock: 7 * 60 + 30, kcal: 450 },
  { type: 'lunch', clock: 12 * 60 + 45, kcal: 700 },
  { type: 'snack', clock: 16 * 60, kcal: 200 },
  { type: 'dinner', clock: 19 * 60 + 15, kcal: 800 },
];

export interface SeedOptions {
  lastDay: string;
  days: number;
  timezone: string;
}

/**
 * `days` days ending at `lastDay` of realistic meals (3–5 a day, times jittered by up to ±60 min)
 * and a night of sleep before each day, always the same for the same options.
 */
export function historyRecords(opts: SeedOptions): { meals: MealRecord[]; sleeps: SleepRecord[] } {
  const random = prng(42);
  const meals: MealRecord[] = [];
  const sleeps: SleepRecord[] = [];
  for (let d = opts.days - 1; d >= 0; d--) {
    const day = addDays(opts.lastDay, -d);
    const bed = localTimeToInstant(addDays(day, -1), 23 * 60 - 30 + Math.floor(random() * 90), opts.timezone);
    const wake = bed + (6.5 + random() * 2) * 3600_000;
    sleeps.push({
      id: `sleep_seed${day.replaceAll('-', '')}`,
      startMs: bed,
      endMs: Math.round(wake),
      day,
      efficiency: 0.8 + random() * 0.15,
      awakenings: Math.floor(random() * 4),
      source: 'seed',
      nap: false,
      createdMs: Math.round(wake),
    });
    for (const [i, m] of MEALS.entries()) {
      if (m.type === 'snack' && random() < 0.5) continue;
      const ts = localTimeToInstant(day, m.clock + Math.round((random() - 0.5) * 120), opts.timezone);
      const offset = offsetMinutes(ts, opts.timezone);
      const kcal = Math.round(m.kcal * (0.7 + random() * 0.6));
      meals.push({
        id: `meal_seed${day.replaceAll('-', '')}${i}`,
        timestampMs: ts,
        utcOffsetMin: offset,
        day: mealDay({ timestamp: ts, utcOffsetMin: offset }, { timezone: opts.timezone, dayStart: '00:00' }),
        mealType: m.type,
        description: `${m.type} on ${day}`,
        calories: kcal,
        caloriesSource: 'logged',
        proteinG: Math.round((kcal * 0.2) / 4),
        carbsG: Math.round((kcal * 0.5) / 4),
        fatG: Math.round((kcal * 0.3) / 9),
        fiberG: Math.round(random() * 10),
        sodiumMg: Math.round(random() * 1200),
        caffeineMg: m.type === 'breakfast' ? 95 : null,
        foods: [{ name: m.type, calories: kcal }],
        source: 'manual',
        inferredTime: false,
        mealTypeInferred: false,
        nutrientSources: {},
        createdMs: ts,
        updatedMs: ts,
      });
    }
  }
  return { meals, sleeps };
}

/** Writes the history straight into the file, in one transaction. Returns the counts written. */
export function seedHistory(db: Db, opts: SeedOptions): { meals: number; sleeps: number } {
  return insertHistory(db, historyRecords(opts));
}

/** Writes records straight into a file, in one transaction (seeding is not what a bench measures). */
export function insertHistory(db: Db, { meals, sleeps }: { meals: MealRecord[]; sleeps: SleepRecord[] }): { meals: number; sleeps: number } {
  db.transaction(() => {
    for (const s of sleeps) insertSleep(db, s);
    for (const m of meals) insertMeal(db, m);
  })();
  return { meals: meals.length, sleeps: sleeps.length };
}

/** The same history as a document for `POST /v1/import`: what Chyme's own export would write. */
export function historyImportDocument(opts: SeedOptions): Record<string, unknown> {
  const { meals, sleeps } = historyRecords(opts);
  return { format: 'chyme.export', format_version: 1, meals: meals.map(mealResource), sleep_sessions: sleeps.map(sleepResource) };
}

/**
 * The sync benches' ten-year history: historyRecords over `nights` days (3–5 meals a day, a night
 * before each), topped up to `meals` meals with late snacks (ninety minutes after one of the day's
 * meals, so the day stays the same) or cut to `meals`. The last day is yesterday.
 */
export function syncBenchHistory(meals: number, nights: number, timezone: string, nowMs: number): { meals: MealRecord[]; sleeps: SleepRecord[] } {
  const h = historyRecords({ lastDay: dayOf(nowMs - 86_400_000, timezone), days: nights, timezone });
  const base = h.meals;
  const out = base.slice(0, meals);
  for (let k = 0; out.length < meals; k++) {
    const m = base[k % base.length]!;
    const ts = m.timestampMs + (90 + Math.floor(k / base.length)) * 60_000;
    out.push({ ...m, id: `${m.id}x${k}`, timestampMs: ts, mealType: 'snack', description: `late snack ${k}`, createdMs: ts, updatedMs: ts });
  }
  return { meals: out, sleeps: h.sleeps };
}
