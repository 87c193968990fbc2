import type { AppContext } from '../app-context.js';
import { getFood, recountFoodUsage } from '../db/foods.js';
import { getMeal, type MealRecord } from '../db/meals.js';
import { getSleep } from '../db/sleep.js';
import { type Row } from '../db/sync.js';
import { mealDay } from '../engine/days.js';
import type { Emit } from '../events/bus.js';
import { entryFoodIds } from '../foods/entries.js';
import { foodResource, foodUsage } from '../foods/foods.js';
import { invalidateFoodSearch } from '../foods/search.js';
import { mealResource } from '../nutrition/meals.js';
import { currentSettings } from '../settings.js';
import { sleepDay } from '../sleep/sessions.js';

/**
 * What is synced, by an allowlist: the record types, their tables, and exactly which columns travel.
 * Nothing else ever enters a document: keys, sessions, webhooks (secrets, deliveries, attempts),
 * events, idempotency records, imports' bookkeeping, MQTT settings and the sync set-up itself stay
 * on the device. The column lists match the triggers of migration 9 (a test checks it).
 *
 * `day` is not synced: every device derives it from the timestamp and its settings, as it would
 * for its own writes.
 */
export type EntityKind = 'meal' | 'sleep' | 'food' | 'saved_meal';

export interface EntityDef {
  kind: EntityKind;
  table: string;
  /** The id prefix of the records (meal_, sleep_, food_, smeal_). */
  prefix: string;
  columns: readonly string[];
  /** Rows of the table that are synced (custom foods only: the shipped food table is on every device). */
  where?: string;
  /** The shard a new record goes to (it stays there after edits). */
  shardKey(row: Row): string;
  /** Columns a device computes for itself when it writes a record that came from a document. */
  derived?(app: AppContext, row: Row): Row;
  /**
   * The record's consequences after the projector wrote it: usage counts, derived data, search,
   * and the event a local write of the same change would have announced (when `announce`).
   */
  after(app: AppContext, emit: Emit, change: ProjectedChange, announce: boolean, changed: ChangedTimes): void;
  /** Captured before a projected write, for the event of a deletion and the cache's old instants. */
  snapshot(app: AppContext, id: string): unknown;
}

/**
 * The instants a batch of projected records touched: the derived data (digestion cache, day
 * scores) is told once per batch, not once per record (a two-year import arriving from another
 * device is thousands of records).
 */
export interface ChangedTimes {
  mealTimes: number[];
  sleepEnds: number[];
}

export interface ProjectedChange {
  id: string;
  kind: 'created' | 'updated' | 'deleted';
  before: unknown;
}

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

const meal: EntityDef = {
  kind: 'meal',
  table: 'meals',
  prefix: 'meal_',
  columns: [
    'timestamp_ms',
    'utc_offset_min',
    'meal_type',
    'description',
    'calories',
    'protein_g',
    'carbs_g',
    'fat_g',
    'fiber_g',
    'sodium_mg',
    'caffeine_mg',
    'foods_json',
    'created_ms',
    'updated_ms',
    'calories_source',
    'nutrient_sources_json',
    'source',
    'inferred_time',
    'meal_type_inferred',
  ],
  // The month of the meal's local date where it was eaten: a month's meals are one document.
  shardKey: (row) => `meals/${monthOf(Number(row.timestamp_ms) + Number(row.utc_offset_min) * 60_000)}`,
  derived: (app, row) => ({ day: mealDay({ timestamp: Number(row.timestamp_ms), utcOffsetMin: Number(row.utc_offset_min) }, currentSettings(app)) }),
  snapshot: (app, id) => getMeal(app.db, id),
  after(app, emit, change, announce, changed) {
    const before = change.before as MealRecord | undefined;
    const after = change.kind === 'deleted' ? undefined : getMeal(app.db, change.id);
    recountFoodUsage(app.db, [...entryFoodIds(before?.foods ?? []), ...entryFoodIds(after?.foods ?? [])]);
    for (const m of [before, after]) if (m) changed.mealTimes.push(m.timestampMs);
    if (!announce) return;
    if (after) emit(change.kind === 'created' ? 'meal.created' : 'meal.updated', mealResource(after));
    else if (before) emit('meal.deleted', { ...mealResource(before), deleted: true });
  },
};

const sleep: EntityDef = {
  kind: 'sleep',
  table: 'sleep_sessions',
  prefix: 'sleep_',
  columns: ['start_ms', 'end_ms', 'efficiency', 'awakenings', 'source', 'created_ms', 'nap'],
  shardKey: (row) => `sleep/${monthOf(Number(row.end_ms)).slice(0, 4)}`,
  derived: (app, row) => ({ day: sleepDay(app, Number(row.end_ms)) }),
  snapshot: (app, id) => getSleep(app.db, id),
  after(app, _emit, change, _announce, changed) {
    const before = change.before as { endMs: number } | undefined;
    const after = change.kind === 'deleted' ? undefined : getSleep(app.db, change.id);
    for (const x of [before, after]) if (x) changed.sleepEnds.push(x.endMs);
  },
};

const food: EntityDef = {
  kind: 'food',
  table: 'foods',
  prefix: 'food_',
  columns: ['source', 'name', 'brand', 'calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg', 'portions_json', 'created_ms', 'updated_ms'],
  where: "source = 'custom'",
  shardKey: () => 'foods',
  snapshot: (app, id) => {
    const f = getFood(app.db, id);
    return f && { food: f, usage: foodUsage(app.db, id) };
  },
  after(app, emit, change, announce) {
    invalidateFoodSearch(app.db);
    if (!announce) return;
    const before = change.before as { food: NonNullable<ReturnType<typeof getFood>>; usage: ReturnType<typeof foodUsage> } | undefined;
    const after = change.kind === 'deleted' ? undefined : getFood(app.db, change.id);
    if (after) emit(change.kind === 'created' ? 'food.created' : 'food.updated', foodResource(after, foodUsage(app.db, change.id)));
    else if (before) emit('food.deleted', { ...foodResource(before.food, before.usage), deleted: true });
  },
};

const savedMeal: EntityDef = {
  kind: 'saved_meal',
  table: 'saved_meals',
  prefix: 'smeal_',
  columns: ['name', 'meal_type', 'foods_json', 'created_ms', 'updated_ms'],
  shardKey: () => 'saved_meals',
  snapshot: () => undefined,
  // Home Assistant's buttons follow after the commit (the sync engine runs savedMealsChanged).
  after() {},
};

export const ENTITIES: readonly EntityDef[] = [meal, sleep, food, savedMeal];

export function entityByKind(kind: string): EntityDef | undefined {
  return ENTITIES.find((e) => e.kind === kind);
}

export function entityOfId(id: string): EntityDef | undefined {
  return ENTITIES.find((e) => id.startsWith(e.prefix));
}

/** The person-level settings that travel (in the root document), by column of the settings table. */
export const SETTINGS_COLUMNS = ['timezone', 'day_start', 'units', 'user_id', 'updated_ms'] as const;
