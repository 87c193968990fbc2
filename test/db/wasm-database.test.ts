// The phone's SQL connection (SQLite-WASM, server/db/wasm-database.ts) against better-sqlite3: the
// same statements give the same rows, results and errors, and every migration and the table
// modules run on it. SQLite-WASM runs in Node on its in-memory VFS (the worker uses OPFS).
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import sqlite3InitModule, { type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import Database from 'better-sqlite3';
import { matchFoodSeqs, insertFood, foodVocabulary } from '../../server/db/foods.js';
import { getMeal, insertMeal, type MealRecord } from '../../server/db/meals.js';
import { migrate, schemaVersion } from '../../server/db/migrate.js';
import { migrations } from '../../server/db/migrations.js';
import type { SqlDatabase } from '../../server/db/sql-api.js';
import { openWasmChymeDatabase, SqliteError, WasmDatabase } from '../../server/db/wasm-database.js';

let sqlite3: Sqlite3Static;
before(async () => {
  sqlite3 = await sqlite3InitModule();
});

const wasm = () => new WasmDatabase(sqlite3, new sqlite3.oo1.DB(':memory:'));
const node = () => new Database(':memory:');

/** Runs `fn` on both connections; returns each answer, or the error it threw in comparable form. */
function both(setup: string, fn: (db: SqlDatabase) => unknown): { node: unknown; wasm: unknown } {
  const outcome = (db: SqlDatabase) => {
    try {
      db.exec(setup);
      return normalise(fn(db));
    } catch (err) {
      const e = err as Error & { code?: string };
      return { threw: e.code ? 'SqliteError' : e.constructor.name, message: e.message, code: e.code };
    } finally {
      db.close();
    }
  };
  return { node: outcome(node()), wasm: outcome(wasm()) };
}

/** better-sqlite3 gives a BLOB as a Buffer, SQLite-WASM as a Uint8Array: compare the bytes. */
function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) return { blob: [...value] };
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v)]));
  return value;
}

const TABLE = 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n, b BLOB); INSERT INTO t (name, n) VALUES (\'a\', 1), (\'b\', 2.5);';

const cases: Array<[string, (db: SqlDatabase) => unknown]> = [
  ['named parameters with @, : and $, in one plain object', (db) => db.prepare('SELECT @a AS a, :b AS b, $c AS c').get({ a: 1, b: 'two', c: null })],
  ['positional values, arrays and a named object mixed', (db) => db.prepare('SELECT ? AS x, @y AS y, ? AS z').get(1, { y: 2 }, [3])],
  ['the storage class each JS value is bound as', (db) => db.prepare('SELECT typeof(?) AS int, typeof(?) AS real, typeof(?) AS big, typeof(?) AS text, typeof(?) AS nul, typeof(?) AS blob').get(3, 3.5, 3n, 'x', null, new Uint8Array([1]))],
  ['undefined binds as NULL', (db) => db.prepare('SELECT ? IS NULL AS isNull').get(undefined)],
  ['an integer beyond 2^53 is read as a number', (db) => db.prepare('SELECT 9007199254740993 AS big, 1.5 AS real, x\'0102\' AS blob').get()],
  ['get() without a row is undefined', (db) => db.prepare('SELECT * FROM t WHERE id = ?').get(99)],
  ['all() and pluck()', (db) => [db.prepare('SELECT * FROM t ORDER BY id').all(), db.prepare('SELECT name FROM t ORDER BY id').pluck().all(), db.prepare('SELECT count(*) FROM t').pluck().get()]],
  ['pluck(false) turns it off', (db) => db.prepare('SELECT name FROM t WHERE id = 1').pluck().pluck(false).get()],
  ['run(): an insert\'s changes and rowid', (db) => db.prepare('INSERT INTO t (name, n) VALUES (?, ?)').run('c', 3)],
  ['run(): an update of no rows reports 0 changes', (db) => db.prepare('UPDATE t SET n = 0 WHERE id = 99').run()],
  ['run(): DDL after a write reports 0 changes, not the write\'s', (db) => [db.prepare('DELETE FROM t').run(), db.prepare('CREATE TABLE u (x)').run()]],
  ['run() on RETURNING finishes the statement', (db) => [db.prepare('UPDATE t SET n = n + 1 RETURNING id').run(), db.prepare('SELECT n FROM t ORDER BY id').pluck().all()]],
  ['run() on a SELECT', (db) => db.prepare('SELECT 1').run()],
  ['pragma simple and as rows', (db) => [db.pragma('user_version = 7'), db.pragma('user_version', { simple: true }), db.pragma('table_info(t)')]],
  ['exec runs several statements', (db) => db.exec('INSERT INTO t (name) VALUES (\'x\'); INSERT INTO t (name) VALUES (\'y\');').prepare('SELECT count(*) FROM t').pluck().get()],
  ['too few values', (db) => db.prepare('SELECT ?, ?').get(1)],
  ['too many values', (db) => db.prepare('SELECT ?').get(1, 2)],
  ['a missing named parameter', (db) => db.prepare('SELECT @a, @b').get({ a: 1 })],
  ['named parameters given positionally', (db) => db.prepare('SELECT @a').get(1)],
  ['two named objects', (db) => db.prepare('SELECT @a, ?').get({ a: 1 }, { a: 2 })],
  ['a boolean is refused', (db) => db.prepare('SELECT ?').get(true)],
  ['get() on a statement without data', (db) => db.prepare('DELETE FROM t').get()],
  ['pluck() on a statement without data', (db) => db.prepare('DELETE FROM t').pluck()],
  ['a constraint failure carries the extended code', (db) => db.prepare('INSERT INTO t (name) VALUES (?)').run('a')],
  ['a syntax error is thrown by prepare()', (db) => db.prepare('SELEC 1')],
  ['a missing table', (db) => db.prepare('SELECT * FROM nope')],
];

for (const [name, fn] of cases) {
  test(`as better-sqlite3: ${name}`, () => {
    const { node: expected, wasm: actual } = both(TABLE, fn);
    assert.deepEqual(actual, expected);
  });
}

test('the cases compare something: errors are thrown and rows come back', () => {
  assert.equal((both(TABLE, (db) => db.prepare('SELECT ?').get(true)).wasm as { threw: string }).threw, 'TypeError');
  assert.equal((both(TABLE, (db) => db.prepare('INSERT INTO t (name) VALUES (?)').run('a')).wasm as { code: string }).code, 'SQLITE_CONSTRAINT_UNIQUE');
  assert.deepEqual(both(TABLE, (db) => db.prepare('SELECT name FROM t ORDER BY id').pluck().all()).wasm, ['a', 'b']);
});

test('as better-sqlite3: transactions commit, roll back on a throw, and nest as savepoints', () => {
  const run = (db: SqlDatabase) => {
    db.exec('CREATE TABLE log (v TEXT)');
    const add = (v: string) => db.prepare('INSERT INTO log VALUES (?)').run(v);
    const seen: unknown[] = [];
    db.transaction(() => {
      add('outer');
      seen.push(db.inTransaction);
      try {
        db.transaction(() => {
          add('inner, undone');
          throw new Error('inner');
        })();
      } catch (err) {
        seen.push((err as Error).message, db.inTransaction);
      }
      db.transaction((v: string) => add(v)).immediate('inner, kept'); // nested: a savepoint whatever the mode
    }).immediate();
    try {
      db.transaction(() => {
        add('whole, undone');
        throw new RangeError('whole');
      }).exclusive();
    } catch (err) {
      seen.push((err as Error).name);
    }
    try {
      db.transaction(async () => add('async'))();
    } catch (err) {
      seen.push((err as Error).message, db.inTransaction);
    }
    seen.push(db.transaction((a: number, b: number) => a + b).deferred(2, 3));
    seen.push(db.prepare('SELECT v FROM log ORDER BY rowid').pluck().all(), db.inTransaction);
    db.close();
    return seen;
  };
  const expected = run(node());
  assert.deepEqual(run(wasm()), expected);
  assert.deepEqual(expected.at(-2), ['outer', 'inner, kept']);
});

test('this build of SQLite-WASM has FTS5', () => {
  const db = wasm();
  assert.deepEqual(db.prepare("SELECT compile_options FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5'").pluck().all(), ['ENABLE_FTS5']);
  db.close();
});

function meal(id: string): MealRecord {
  const ts = Date.parse('2026-11-03T12:30:00Z');
  return {
    id, timestampMs: ts, utcOffsetMin: 60, day: '2026-11-03', mealType: 'lunch', description: 'Lentil soup', calories: 420, caloriesSource: 'logged',
    proteinG: 21.5, carbsG: null, fatG: null, fiberG: 9, sodiumMg: null, caffeineMg: null, foods: [{ name: 'Lentils', calories: 300 }], source: 'manual', inferredTime: false, mealTypeInferred: false, nutrientSources: { protein_g: 'logged' }, createdMs: ts, updatedMs: ts,
  };
}

test('every migration runs on SQLite-WASM and gives the schema better-sqlite3 gets', () => {
  const n = node();
  n.pragma('foreign_keys = ON');
  migrate(n, migrations);
  const w = openWasmChymeDatabase(sqlite3, new sqlite3.oo1.DB(':memory:'));
  const schema = (db: SqlDatabase) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
  assert.equal(schemaVersion(w), Math.max(...migrations.map((m) => m.version)));
  assert.ok((schema(w) as { name: string }[]).some((o) => o.name === 'foods_fts'));
  assert.deepEqual(schema(w), schema(n));
  assert.equal(w.pragma('foreign_keys', { simple: true }), 1);
  n.close();
  w.close();
});

test('the table modules run unchanged on SQLite-WASM: a meal, and a food found through FTS5', () => {
  const answers = [node(), openWasmChymeDatabase(sqlite3, new sqlite3.oo1.DB(':memory:'))].map((db) => {
    if (db instanceof Database) migrate(db, migrations);
    insertMeal(db, meal('meal_1'));
    const food = insertFood(db, {
      id: 'food_1', source: 'custom', name: 'Red lentil soup', brand: 'Home',
      nutrients: { calories: 90, protein_g: 6, carbs_g: 12, fat_g: 2, fiber_g: 3, sugars_g: 1, sodium_mg: 300, caffeine_mg: null },
      portions: [{ label: 'bowl', grams: 350 }], sr28Mask: null, createdMs: 1, updatedMs: 1,
    });
    const answer = { meal: getMeal(db, 'meal_1'), seqs: matchFoodSeqs(db, 'lent*'), food, words: foodVocabulary(db), none: matchFoodSeqs(db, 'bread') };
    db.close();
    return answer;
  });
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[1]!.meal, meal('meal_1'));
  assert.deepEqual(answers[1]!.seqs, [answers[1]!.food.seq]);
  assert.deepEqual(answers[1]!.none, []);
});

test('a statement cache eviction leaves earlier statements usable, and close() frees them', () => {
  const db = wasm();
  const kept = db.prepare('SELECT ? AS v').pluck();
  for (let i = 0; i < 600; i++) db.prepare(`SELECT ${i}`).get();
  assert.equal(kept.get(5), 5);
  db.close();
  assert.throws(() => kept.get(1), /not open/);
  assert.ok(new SqliteError('m', 'SQLITE_ERROR') instanceof Error);
});

test('the phone’s connection writes ahead (WAL in exclusive locking mode, the log capped, every commit flushed)', () => {
  // A file on the in-memory VFS (':memory:' has no log file).
  const w = openWasmChymeDatabase(sqlite3, new sqlite3.oo1.DB('/wal-check.db', 'c'));
  try {
    assert.equal(w.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(w.pragma('locking_mode', { simple: true }), 'exclusive');
    assert.equal(w.pragma('journal_size_limit', { simple: true }), 1024 * 1024);
    assert.equal(w.pragma('synchronous', { simple: true }), 2);
    insertMeal(w, meal('meal_wal'));
    assert.deepEqual(getMeal(w, 'meal_wal'), meal('meal_wal'));
  } finally {
    w.close();
  }
});
