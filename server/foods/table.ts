import type { Db } from '../db/connection.js';
import { NUTRIENT_KEYS, replaceTableFoods, type NewFood, type Nutrients } from '../db/foods.js';
import { readServiceState, writeServiceState } from '../db/service-state.js';
import { shippedFoodTable, type FoodTableFile } from './table-file.js';

const TABLE_STATE_KEY = 'foods.table';

export interface TableState {
  version: string;
  count: number;
  sources: FoodTableFile['sources'];
  loaded_ms: number;
  load_ms: number;
}

export function usdaFoodId(ndb: string): string {
  return `food_usda_${ndb}`;
}

/** What the shipped table holds, as recorded when it was last loaded (undefined before the first load). */
export function loadedTableState(db: Db): TableState | undefined {
  return readServiceState<TableState>(db, TABLE_STATE_KEY);
}

/**
 * Loads the shipped food table into the database when it is not there yet or the shipped file
 * changed (its hash differs from the one recorded): one transaction, so a crash leaves the previous
 * table. Custom foods, usage and meals are untouched; USDA ids are NDB numbers, so they survive.
 * Returns whether it loaded.
 */
export function ensureFoodTable(db: Db, nowMs: number): boolean {
  const shipped = shippedFoodTable();
  const version = shipped.version;
  if (loadedTableState(db)?.version === version) return false;
  const started = performance.now();
  const file = shipped.read();
  const foods: NewFood[] = file.foods.map((row) => {
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
  });
  db.transaction(() => {
    replaceTableFoods(db, foods);
    const state: TableState = { version, count: foods.length, sources: file.sources, loaded_ms: nowMs, load_ms: 0 };
    state.load_ms = Math.round(performance.now() - started);
    writeServiceState(db, TABLE_STATE_KEY, state);
  }).immediate();
  return true;
}
