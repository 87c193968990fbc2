import type { AppContext } from '../app-context.js';
import { getFood } from '../db/foods.js';
import { getMeal } from '../db/meals.js';
import { getSavedMeal } from '../db/saved-meals.js';
import { getSleep } from '../db/sleep.js';

/**
 * A synced record as a person recognises it, for the conflict list: a meal by its local day, time
 * and description ("2026-11-24 12:30 · Oatmeal"), a night by when it began, a food or saved meal
 * by its name. null when the record is gone.
 */
export function recordLabel(app: AppContext, entity: string, id: string): string | null {
  const db = app.db;
  const local = (ms: number, offsetMin: number) => new Date(ms + offsetMin * 60_000).toISOString().slice(0, 16).replace('T', ' ');
  switch (entity) {
    case 'meal': {
      const m = getMeal(db, id);
      return m ? `${local(m.timestampMs, m.utcOffsetMin)} · ${m.description || 'Meal'}` : null;
    }
    case 'sleep': {
      const s = getSleep(db, id);
      return s ? `Sleep ending ${s.day}` : null;
    }
    case 'food':
      return getFood(db, id)?.name ?? null;
    case 'saved_meal':
      return getSavedMeal(db, id)?.name ?? null;
    case 'settings':
      return 'Settings';
    default:
      return null;
  }
}
