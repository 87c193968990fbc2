import type { Db } from '../server/db/connection.js';
import { insertMeal, type MealRecord } from '../server/db/meals.js';
import { insertSleep } from '../server/db/sleep.js';
import { mealDay } from '../server/engine/days.js';
import { addDays, localTimeToInstant, offsetMinutes } from '../server/time/tz.js';
import { prng } from '../test/helpers/random.js';

const MEALS: Array<{ type: MealRecord['mealType']; clock: number; kcal: number }> = [
  { type: 'breakfast', clock: 7 * 60 + 30, kcal: 450 },
  { type: 'lunch', clock: 12 * 60 + 45, kcal: 700 },
  { type: 'snack', clock: 16 * 60, kcal: 200 },
  { type: 'dinner', clock: 19 * 60 + 15, kcal: 800 },
];

/**
 * Seeds `days` days ending at `lastDay` with realistic meals (3–5 a day, times jittered by up to
 * ±60 min) and a night of sleep before each day. Returns the counts written.
 */
export function seedHistory(db: Db, opts: { lastDay: string; days: number; timezone: string }): { meals: number; sleeps: number } {
  const random = prng(42);
  let meals = 0;
  let sleeps = 0;
  db.transaction(() => {
    for (let d = opts.days - 1; d >= 0; d--) {
      const day = addDays(opts.lastDay, -d);
      const bed = localTimeToInstant(addDays(day, -1), 23 * 60 - 30 + Math.floor(random() * 90), opts.timezone);
      const wake = bed + (6.5 + random() * 2) * 3600_000;
      insertSleep(db, {
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
      sleeps++;
      for (const [i, m] of MEALS.entries()) {
        if (m.type === 'snack' && random() < 0.5) continue;
        const ts = localTimeToInstant(day, m.clock + Math.round((random() - 0.5) * 120), opts.timezone);
        const offset = offsetMinutes(ts, opts.timezone);
        const kcal = Math.round(m.kcal * (0.7 + random() * 0.6));
        insertMeal(db, {
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
          nutrientSources: {},
          createdMs: ts,
          updatedMs: ts,
        });
        meals++;
      }
    }
  })();
  return { meals, sleeps };
}
