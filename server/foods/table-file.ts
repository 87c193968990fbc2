import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { NUTRIENT_KEYS, type NutrientKey } from '../db/foods.js';
import { packageRoot } from '../paths.js';

export { NUTRIENT_KEYS, type NutrientKey };

type N = number | null;
/**
 * One food of the shipped table: NDB number, name, the eight nutrients per 100 g (null when the
 * source does not know), a bit mask of the nutrients whose value comes from SR28 (bit i = NUTRIENT_KEYS[i];
 * the others come from SR24), 1 when the food is in SR24 (name and portions from SR24), and its
 * household portions as [label, grams].
 */
export type FoodTableRow = [string, string, N, N, N, N, N, N, N, N, number, 0 | 1, Array<[string, number]>];

export interface FoodTableFile {
  format: 1;
  sources: Record<'sr24' | 'sr28', { release: string; via: string }>;
  columns: string[];
  foods: FoodTableRow[];
}

/** The derived table committed in the repository (rebuilt by scripts/build-foods-table.ts). */
export const FOOD_TABLE_FILE = join(packageRoot(), 'server', 'foods', 'data', 'usda-sr.json.gz');

export interface ShippedFoodTable {
  /** sha-256 (16 hex) of the shipped file: a new file means the table is reloaded into the database. */
  version: string;
  /** Unzips and parses the file (only needed when the database does not hold this version yet). */
  read(): FoodTableFile;
}

/** The table in `gz` (the shipped file's bytes); `unzipped` gives its JSON text. */
export function foodTableOf(gz: Uint8Array, unzipped: () => string): ShippedFoodTable {
  return { version: createHash('sha256').update(gz).digest('hex').slice(0, 16), read: () => JSON.parse(unzipped()) as FoodTableFile };
}

let provided: ShippedFoodTable | undefined;

/**
 * The phone's worker has no file system and no synchronous gunzip: it fetches the same file and
 * unzips it (DecompressionStream) before its first request, then hands it over here.
 */
export function provideShippedFoodTable(table: ShippedFoodTable): void {
  provided = table;
}

export function shippedFoodTable(): ShippedFoodTable {
  if (provided) return provided;
  const gz = readFileSync(FOOD_TABLE_FILE);
  return foodTableOf(gz, () => gunzipSync(gz).toString('utf8'));
}
