import type { Db } from '../db/connection.js';
import { createFoodStage, dropFoodStage, NUTRIENT_KEYS, replaceTableFoods, stageFoods, type NewFood, type Nutrients } from '../db/foods.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { SteppedJob } from './steps.js';
import { shippedFoodTable, type FoodTableFile, type FoodTableRow } from './table-file.js';

const TABLE_STATE_KEY = 'foods.table';

export interface TableState {
  version: string;
  count: number;
  sources: FoodTableFile['sources'];
  loaded_ms: number;
  /** From the version check to the commit, wall time: with the warm-up's slices, the requests answered between them too. */
  load_ms: number;
}

export function usdaFoodId(ndb: string): string {
  return `food_usda_${ndb}`;
}

/** What the shipped table holds, as recorded when it was last loaded (undefined before the first load). */
export function loadedTableState(db: Db): TableState | undefined {
  return readServiceState<TableState>(db, TABLE_STATE_KEY);
}

/** Rows staged per step of a load: a few ms of work (the whole table is ~9,400 rows). */
const STAGE_ROWS = 100;
let stages = 0;

/**
 * Loads the shipped food table into the database when it is not there yet or the shipped file
 * changed (its hash differs from the one recorded); returns whether it loaded. Custom foods, usage
 * and meals are untouched; USDA ids are NDB numbers, so they survive.
 */
export function ensureFoodTable(db: Db, nowMs: number): boolean {
  return new SteppedJob(foodTableSteps(db, () => nowMs)).finish();
}

/**
 * ensureFoodTable in steps (see steps.ts): the file is parsed, then its rows are written into a
 * table of this connection's own STAGE_ROWS at a time, and only the last step writes the
 * database: one transaction swaps the new rows in and records the version. So a crash, or an
 * error, at any step leaves the previous table (empty on a first start) recorded as it was, and
 * the next start loads again; nobody ever reads a half table.
 */
export function* foodTableSteps(db: Db, now: () => number): Generator<void, boolean> {
  const shipped = shippedFoodTable();
  const version = shipped.version;
  if (loadedTableState(db)?.version === version) return false;
  const started = performance.now();
  const file = shipped.read();
  yield;
  const stage = `foods_loading_${++stages}`;
  createFoodStage(db, stage);
  try {
    for (let i = 0; i < file.foods.length; i += STAGE_ROWS) {
      stageFoods(db, stage, file.foods.slice(i, i + STAGE_ROWS).map(tableFood));
      yield;
    }
    return db.transaction(() => {
      // Another connection (a second process on the file) may have loaded it meanwhile.
      if (loadedTableState(db)?.version === version) return false;
      replaceTableFoods(db, stage);
      const state: TableState = { version, count: file.foods.length, sources: file.sources, loaded_ms: now(), load_ms: 0 };
      state.load_ms = Math.round(performance.now() - started);
      writeServiceState(db, TABLE_STATE_KEY, state);
      return true;
    }).immediate();
  } finally {
    // The stage is the connection's alone, so it is also gone when the connection closes midway.
    dropFoodStage(db, stage);
  }
}

function tableFood(row: FoodTableRow): NewFood {
  const nutrients = {} as Nutrients;
  NUTRIENT_KEYS.forEach((k, i) => (nutrients[k] = row[2 + i] as number | null));
  return {
    id: usdaFoodId(row[0]),
    source: 'usda_sr',
    name: row[1],
    brand: null,
    nutrients,
    portions: row[12].map(([label, grams]) => ({ label, grams })),
    sr28Mask: row[10],
    createdMs: null,
    updatedMs: null,
  };
}
