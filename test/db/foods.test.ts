import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../server/db/connection.js';
import { createFoodStage, foodVocabulary, getFood, insertFood, listFoodNames, matchFoodSeqs, replaceTableFoods, stageFoods, type NewFood } from '../../server/db/foods.js';
import { searchWords, segmentKey } from '../../server/foods/search-words.js';
import { loadedTableState, ensureFoodTable, usdaFoodId } from '../../server/foods/table.js';

const food = (id: string, name: string, source: NewFood['source']): NewFood => ({
  id,
  source,
  name,
  brand: null,
  nutrients: { calories: 100, protein_g: null, carbs_g: null, fat_g: null, fiber_g: null, sugars_g: null, sodium_mg: null, caffeine_mg: null },
  portions: [],
  sr28Mask: null,
  createdMs: 0,
  updatedMs: 0,
});

test('the shipped table loads once per version, in one transaction, and is indexed', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-foods-')), 'chyme.db'));
  assert.equal(ensureFoodTable(db, 1), true);
  assert.equal(ensureFoodTable(db, 2), false, 'the same shipped version is not loaded again');
  assert.ok(loadedTableState(db)!.count > 9000);
  assert.ok(matchFoodSeqs(db, '"banana"*').length > 10);
  db.close();
});

test('replacing the table keeps custom foods indexed and the index triggers in place', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-foods-')), 'chyme.db'));
  const replace = (foods: NewFood[]) => {
    createFoodStage(db, 'stage');
    stageFoods(db, 'stage', foods);
    replaceTableFoods(db, 'stage');
  };
  replace([food('food_usda_1', 'Apple pie', 'usda_sr'), food('food_usda_2', 'Quince', 'usda_sr')]);
  insertFood(db, food('food_mine', 'Grandma quince jam', 'custom'));
  replace([food('food_usda_2', 'Quince, raw', 'usda_sr')]);
  assert.equal(matchFoodSeqs(db, '"apple"*').length, 0, 'foods gone from the table are gone from the index');
  assert.equal(matchFoodSeqs(db, '"quince"*').length, 2, 'the new table and the custom food are indexed');
  insertFood(db, food('food_later', 'Apple sauce', 'custom'));
  assert.equal(matchFoodSeqs(db, '"apple"*').length, 1, 'the insert trigger is back');
  db.prepare("DELETE FROM foods WHERE id = 'food_mine'").run();
  assert.equal(matchFoodSeqs(db, '"jam"*').length, 0, 'the delete trigger is back');
  db.close();
});

test('the search words fit the shipped table: synonyms name its words, staples its foods, heads and fillers its segments', () => {
  const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'chyme-foods-')), 'chyme.db'));
  ensureFoodTable(db, 1);
  const vocabulary = new Set(foodVocabulary(db));
  const segments = new Set(listFoodNames(db).flatMap((f) => f.name.split(',').map(segmentKey)));
  const sw = searchWords();
  const wrong: string[] = [];
  for (const [key, values] of sw.synonyms) {
    for (const word of values.flat()) if (!vocabulary.has(word)) wrong.push(`synonym "${key}": "${word}" is no word of the table`);
  }
  for (const [phrase, ndb] of sw.staples) if (!getFood(db, usdaFoodId(ndb))) wrong.push(`staple "${phrase}": no food ${ndb}`);
  for (const segment of [...sw.heads, ...sw.fillers]) if (!segments.has(segment)) wrong.push(`"${segment}" is no segment of a name`);
  assert.deepEqual(wrong, []);
  assert.ok(sw.synonyms.size > 50 && sw.staples.size > 40);
  db.close();
});
