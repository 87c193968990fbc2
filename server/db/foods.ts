import type { SqlDatabase as Db } from './sql-api.js';

/** The nutrients Chyme keeps per 100 g (and per food entry), in the order the table file stores them. */
export const NUTRIENT_KEYS = ['calories', 'protein_g', 'carbs_g', 'fat_g', 'fiber_g', 'sugars_g', 'sodium_mg', 'caffeine_mg'] as const;
export type NutrientKey = (typeof NUTRIENT_KEYS)[number];
export type Nutrients = Record<NutrientKey, number | null>;

export type FoodSource = 'usda_sr' | 'custom';

export interface Portion {
  label: string;
  grams: number;
}

export interface FoodRecord {
  seq: number;
  id: string;
  source: FoodSource;
  name: string;
  brand: string | null;
  /** Per 100 g; null when unknown. */
  nutrients: Nutrients;
  portions: Portion[];
  /** USDA foods: bit i set when NUTRIENT_KEYS[i] comes from SR28 (else SR24); null for custom foods. */
  sr28Mask: number | null;
  createdMs: number | null;
  updatedMs: number | null;
}

export type NewFood = Omit<FoodRecord, 'seq'>;

interface FoodRow {
  seq: number;
  id: string;
  source: FoodSource;
  name: string;
  brand: string | null;
  calories: number | null;
  protein_g: number | null;
  carbs_g: number | null;
  fat_g: number | null;
  fiber_g: number | null;
  sugars_g: number | null;
  sodium_mg: number | null;
  caffeine_mg: number | null;
  portions_json: string;
  sr28_mask: number | null;
  created_ms: number | null;
  updated_ms: number | null;
}

const COLUMNS = `seq, id, source, name, brand, ${NUTRIENT_KEYS.join(', ')}, portions_json, sr28_mask, created_ms, updated_ms`;

function fromRow(r: FoodRow): FoodRecord {
  const nutrients = {} as Nutrients;
  for (const k of NUTRIENT_KEYS) nutrients[k] = r[k];
  return {
    seq: r.seq,
    id: r.id,
    source: r.source,
    name: r.name,
    brand: r.brand,
    nutrients,
    portions: JSON.parse(r.portions_json) as Portion[],
    sr28Mask: r.sr28_mask,
    createdMs: r.created_ms,
    updatedMs: r.updated_ms,
  };
}

function toParams(f: NewFood): Record<string, unknown> {
  return {
    id: f.id,
    source: f.source,
    name: f.name,
    brand: f.brand,
    ...f.nutrients,
    portions_json: JSON.stringify(f.portions),
    sr28_mask: f.sr28Mask,
    created_ms: f.createdMs,
    updated_ms: f.updatedMs,
  };
}

const INSERT_COLUMNS = `id, source, name, brand, ${NUTRIENT_KEYS.join(', ')}, portions_json, sr28_mask, created_ms, updated_ms`;
const INSERT = `INSERT INTO foods (${INSERT_COLUMNS})
  VALUES (@id, @source, @name, @brand, ${NUTRIENT_KEYS.map((k) => `@${k}`).join(', ')}, @portions_json, @sr28_mask, @created_ms, @updated_ms)`;

export function insertFood(db: Db, food: NewFood): FoodRecord {
  const seq = Number(db.prepare(INSERT).run(toParams(food)).lastInsertRowid);
  return { ...food, seq };
}

export function updateFood(db: Db, food: FoodRecord): void {
  db.prepare(
    `UPDATE foods SET name = @name, brand = @brand, ${NUTRIENT_KEYS.map((k) => `${k} = @${k}`).join(', ')},
       portions_json = @portions_json, updated_ms = @updated_ms WHERE id = @id`,
  ).run(toParams(food));
}

export function deleteFood(db: Db, id: string): boolean {
  return db.prepare('DELETE FROM foods WHERE id = ?').run(id).changes > 0;
}

export function getFood(db: Db, id: string): FoodRecord | undefined {
  const row = db.prepare(`SELECT ${COLUMNS} FROM foods WHERE id = ?`).get(id) as FoodRow | undefined;
  return row && fromRow(row);
}

/** The foods with these ids, in no particular order (unknown ids are skipped). */
export function foodExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM foods WHERE id = ?').get(id) !== undefined;
}

export function getFoods(db: Db, ids: readonly string[]): FoodRecord[] {
  if (ids.length === 0) return [];
  const rows = db.prepare(`SELECT ${COLUMNS} FROM foods WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(ids)) as FoodRow[];
  return rows.map(fromRow);
}

/**
 * Which of these ids name a food that exists, or one the stored data still refers to: a meal's
 * entries (food_usage counts them) or a saved meal's, so an entry of a food since deleted can be
 * sent back as it was returned.
 */
export function knownFoodIds(db: Db, ids: readonly string[]): Set<string> {
  if (ids.length === 0) return new Set();
  const rows = db
    .prepare(
      `SELECT value AS id FROM json_each(@ids) AS wanted
       WHERE EXISTS (SELECT 1 FROM foods WHERE foods.id = wanted.value)
          OR EXISTS (SELECT 1 FROM food_usage WHERE food_usage.food_id = wanted.value)
          OR EXISTS (SELECT 1 FROM saved_meals, json_each(saved_meals.foods_json) AS entry
                     WHERE json_extract(entry.value, '$.food_id') = wanted.value)`,
    )
    .all({ ids: JSON.stringify([...new Set(ids)]) }) as Array<{ id: string }>;
  return new Set(rows.map((r) => r.id));
}

export function getFoodsBySeq(db: Db, seqs: readonly number[]): FoodRecord[] {
  if (seqs.length === 0) return [];
  const rows = db.prepare(`SELECT ${COLUMNS} FROM foods WHERE seq IN (SELECT value FROM json_each(?))`).all(JSON.stringify(seqs)) as FoodRow[];
  return rows.map(fromRow);
}

export function listFoodsBySource(db: Db, source: FoodSource): FoodRecord[] {
  return (db.prepare(`SELECT ${COLUMNS} FROM foods WHERE source = ? ORDER BY seq`).all(source) as FoodRow[]).map(fromRow);
}

export function countFoodsBySource(db: Db, source: FoodSource): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM foods WHERE source = ?').get(source) as { n: number }).n;
}

/** Every food's seq, id, name and brand: what the search ranker keeps in memory. */
export function listFoodNames(db: Db): Array<{ seq: number; id: string; source: FoodSource; name: string; brand: string | null }> {
  return db.prepare('SELECT seq, id, source, name, brand FROM foods').all() as Array<{
    seq: number;
    id: string;
    source: FoodSource;
    name: string;
    brand: string | null;
  }>;
}

/**
 * A table of the connection's own (TEMP: gone with the connection, never in the file) that a new
 * USDA table is written into, a step at a time, before replaceTableFoods swaps it in.
 * `name` is the caller's (a constant and a counter), never input.
 */
export function createFoodStage(db: Db, name: string): void {
  db.exec(`DROP TABLE IF EXISTS temp."${name}"`);
  db.exec(`CREATE TEMP TABLE "${name}" AS SELECT ${INSERT_COLUMNS} FROM main.foods WHERE 0`);
}

export function stageFoods(db: Db, name: string, foods: readonly NewFood[]): void {
  const insert = db.prepare(INSERT.replace('INSERT INTO foods', `INSERT INTO temp."${name}"`));
  db.transaction(() => {
    for (const f of foods) insert.run(toParams(f));
  })();
}

export function dropFoodStage(db: Db, name: string): void {
  db.exec(`DROP TABLE IF EXISTS temp."${name}"`);
}

/**
 * Replaces every USDA food with the staged ones (the caller runs this in one transaction). The
 * index triggers are set aside meanwhile and the FTS index rebuilt once at the end: 2× faster than
 * indexing row by row (0.24 s instead of 0.53 s for the whole table). Their definitions are read
 * back from the schema, so migration 4 stays their only source.
 */
export function replaceTableFoods(db: Db, stage: string): void {
  const triggers = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'foods'")
    .all() as Array<{ name: string; sql: string }>;
  for (const t of triggers) db.exec(`DROP TRIGGER "${t.name}"`);
  db.prepare("DELETE FROM foods WHERE source = 'usda_sr'").run();
  db.exec(`INSERT INTO main.foods (${INSERT_COLUMNS}) SELECT ${INSERT_COLUMNS} FROM temp."${stage}"`);
  db.exec("INSERT INTO foods_fts (foods_fts) VALUES ('rebuild')");
  for (const t of triggers) db.exec(t.sql);
}

/** Seqs of the foods matching an FTS5 query expression (the caller builds it from known words). */
export function matchFoodSeqs(db: Db, match: string): number[] {
  return db.prepare('SELECT rowid FROM foods_fts WHERE foods_fts MATCH ?').pluck().all(match) as number[];
}

/** Every distinct word in the names and brands of foods (the search index's vocabulary). */
export function foodVocabulary(db: Db): string[] {
  return db.prepare('SELECT term FROM foods_vocab').pluck().all() as string[];
}

// ---- Usage ------------------------------------------------------------------------------------

export interface FoodUsage {
  foodId: string;
  count: number;
  lastUsedMs: number;
}

export function listFoodUsage(db: Db): FoodUsage[] {
  return db.prepare('SELECT food_id AS foodId, use_count AS count, last_used_ms AS lastUsedMs FROM food_usage').all() as FoodUsage[];
}

/**
 * Recounts how many meals reference each of these foods and when the latest was eaten. Runs in the
 * meal write's transaction; the scan of foods_json is per write, never per search.
 */
export function recountFoodUsage(db: Db, foodIds: Iterable<string>): void {
  const count = db.prepare(
    `SELECT COUNT(DISTINCT meals.id) AS n, MAX(meals.timestamp_ms) AS last FROM meals, json_each(meals.foods_json) AS entry
     WHERE json_extract(entry.value, '$.food_id') = ?`,
  );
  const upsert = db.prepare(
    `INSERT INTO food_usage (food_id, use_count, last_used_ms) VALUES (?, ?, ?)
     ON CONFLICT (food_id) DO UPDATE SET use_count = excluded.use_count, last_used_ms = excluded.last_used_ms`,
  );
  const remove = db.prepare('DELETE FROM food_usage WHERE food_id = ?');
  for (const id of new Set(foodIds)) {
    const r = count.get(id) as { n: number; last: number | null };
    if (r.n > 0 && r.last !== null) upsert.run(id, r.n, r.last);
    else remove.run(id);
  }
}

/** Rebuilds the whole usage table from the meals (after an import). */
export function rebuildFoodUsage(db: Db): void {
  db.prepare('DELETE FROM food_usage').run();
  db.prepare(
    `INSERT INTO food_usage (food_id, use_count, last_used_ms)
     SELECT json_extract(entry.value, '$.food_id') AS fid, COUNT(DISTINCT meals.id), MAX(meals.timestamp_ms)
     FROM meals, json_each(meals.foods_json) AS entry WHERE fid IS NOT NULL GROUP BY fid`,
  ).run();
}
