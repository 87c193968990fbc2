import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { openDatabase } from '../../server/db/connection.js';
import { matchFoodSeqs } from '../../server/db/foods.js';
import { SteppedJob } from '../../server/foods/steps.js';
import { FOOD_TABLE_FILE, foodTableOf, provideShippedFoodTable, type FoodTableFile, type FoodTableRow } from '../../server/foods/table-file.js';
import { ensureFoodTable, foodTableSteps, loadedTableState } from '../../server/foods/table.js';

const shippedGz = readFileSync(FOOD_TABLE_FILE);
const shipped = JSON.parse(gunzipSync(shippedGz).toString('utf8')) as FoodTableFile;

/** Ships a table of these rows (its version is the hash of its bytes, as for the real file). */
function ship(rows: FoodTableRow[]): string {
  const gz = gzipSync(JSON.stringify({ ...shipped, foods: rows }));
  const table = foodTableOf(gz, () => gunzipSync(gz).toString('utf8'));
  provideShippedFoodTable(table);
  return table.version;
}

after(() => provideShippedFoodTable(foodTableOf(shippedGz, () => gunzipSync(shippedGz).toString('utf8'))));

const usdaRows = (db: ReturnType<typeof openDatabase>) =>
  db.prepare("SELECT id, name FROM foods WHERE source = 'usda_sr' ORDER BY id").all() as Array<{ id: string; name: string }>;
const tempTables = (db: ReturnType<typeof openDatabase>) => db.prepare("SELECT name FROM sqlite_temp_master WHERE type = 'table'").pluck().all();

// Old: the first 600 foods. New: 700 foods from the 300th, each renamed, so that a row of either is told apart.
const oldRows = shipped.foods.slice(0, 600);
const newRows = shipped.foods.slice(300, 1000).map((r): FoodTableRow => [r[0], `${r[1]}, zzrenamed`, ...(r.slice(2) as [])] as unknown as FoodTableRow);
const expected = (rows: FoodTableRow[]) => rows.map((r) => ({ id: `food_usda_${r[0]}`, name: r[1] })).sort((a, b) => (a.id < b.id ? -1 : 1));

test('an error in the middle of loading a new table leaves the previous table, recorded as it was', () => {
  const failures: Array<[string, (rows: FoodTableRow[]) => void]> = [
    // Thrown while the rows are staged (the sixth step of 100 rows).
    ['a row that cannot be read', (rows) => ((rows[550] as unknown[])[12] = null)],
    // Thrown by the last step, the transaction that swaps the rows in.
    ['a row the foods table refuses', (rows) => ((rows[550] as unknown[])[1] = null)],
  ];
  for (const [what, spoil] of failures) {
    const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-table-')), 'chyme.db'));
    const oldVersion = ship(oldRows);
    assert.equal(ensureFoodTable(db, 1), true);
    const bad = newRows.map((r) => [...r] as FoodTableRow);
    spoil(bad);
    ship(bad);
    assert.throws(() => ensureFoodTable(db, 2), Error, what);
    assert.equal(loadedTableState(db)?.version, oldVersion, `${what}: the old version is still the one recorded`);
    assert.equal(loadedTableState(db)?.count, 600);
    assert.deepEqual(usdaRows(db), expected(oldRows), `${what}: the old table, whole`);
    assert.equal(matchFoodSeqs(db, '"zzrenamed"*').length, 0, `${what}: nothing of the new table is indexed`);
    assert.deepEqual(tempTables(db), [], `${what}: the staged rows are gone`);
    const newVersion = ship(newRows);
    assert.equal(ensureFoodTable(db, 3), true, 'the next try loads');
    assert.equal(loadedTableState(db)?.version, newVersion);
    assert.deepEqual(usdaRows(db), expected(newRows), 'the new table, whole, and no food of the old one');
    assert.equal(matchFoodSeqs(db, '"zzrenamed"*').length, 700);
    db.close();
  }
});

test('a load cut off between two steps (the process ended) leaves the previous table; the next start loads', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'chyme-table-')), 'chyme.db');
  let db = openDatabase(path);
  const oldVersion = ship(oldRows);
  ensureFoodTable(db, 1);
  const newVersion = ship(newRows);
  const steps = foodTableSteps(db, () => 2);
  for (let i = 0; i < 3; i++) assert.equal(steps.next().done, false);
  db.close();
  db = openDatabase(path);
  assert.equal(loadedTableState(db)?.version, oldVersion);
  assert.deepEqual(usdaRows(db), expected(oldRows));
  assert.equal(new SteppedJob(foodTableSteps(db, () => 3)).finish(), true);
  assert.equal(loadedTableState(db)?.version, newVersion);
  assert.deepEqual(usdaRows(db), expected(newRows));
  db.close();
});

test('a job ends once for everyone who advances it: a step that throws ends it for all', () => {
  function* steps(): Generator<void, number> {
    yield;
    yield;
    return 7;
  }
  const ended: string[] = [];
  const job = new SteppedJob(steps(), () => ended.push('ended'));
  assert.equal(job.step(), false);
  assert.equal(job.finish(), 7);
  assert.equal(job.step(), true);
  assert.equal(job.finish(), 7);
  assert.deepEqual(ended, ['ended']);
  function* failing(): Generator<void, number> {
    yield;
    throw new Error('broken');
  }
  const bad = new SteppedJob(failing(), () => ended.push('failed'));
  assert.equal(bad.step(), false);
  assert.throws(() => bad.step(), /broken/);
  assert.throws(() => bad.finish(), /broken/, 'the error again, not a result');
  assert.deepEqual(ended, ['ended', 'failed']);
});
