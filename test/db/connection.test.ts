import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { DatabaseTooNewError, migrate, NotChymeDatabaseError, openDatabase, PAGE_CACHE_KIB, relaxedCommit, schemaVersion } from '../../server/db/connection.js';
import { migrations } from '../../server/db/migrations.js';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'chyme-db-')), 'nested', 'chyme.db');
const latest = Math.max(...migrations.map((m) => m.version));

test('a new database is created with WAL, foreign keys, synchronous=FULL, its page-cache budget and the latest schema', () => {
  const db = openDatabase(tempDb());
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  // Negative = KiB. Not better-sqlite3's build default (-16000), which a long-running server fills.
  assert.equal(db.pragma('cache_size', { simple: true }), -PAGE_CACHE_KIB);
  assert.ok(PAGE_CACHE_KIB < 16000);
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(db.pragma('synchronous', { simple: true }), 2); // 2 = FULL
  assert.equal(schemaVersion(db), latest);
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
  for (const t of ['meals', 'sleep_sessions', 'api_keys', 'settings', 'events', 'idempotency_keys']) assert.ok(tables.includes(t), t);
  db.close();
});

test('reopening an up-to-date database changes nothing', () => {
  const path = tempDb();
  openDatabase(path).close();
  const db = openDatabase(path);
  assert.equal(schemaVersion(db), latest);
  db.close();
});

test('a database from a newer Chyme is refused and left untouched', () => {
  const path = tempDb();
  openDatabase(path).close();
  const raw = new Database(path);
  raw.pragma(`user_version = ${latest + 5}`);
  raw.close();
  assert.throws(() => openDatabase(path), (err: unknown) => err instanceof DatabaseTooNewError && err.found === latest + 5);
  const check = new Database(path);
  assert.equal(check.pragma('user_version', { simple: true }), latest + 5);
  check.close();
});

test('another program\'s SQLite database, or a file that is not SQLite, is refused byte for byte unchanged', () => {
  const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
  const dir = dirname(tempDb());
  mkdirSync(dir, { recursive: true });
  const bookmarks = join(dir, 'places.sqlite');
  const raw = new Database(bookmarks);
  raw.exec("CREATE TABLE bookmarks (url TEXT); INSERT INTO bookmarks VALUES ('https://example.org/')");
  raw.close();
  const notes = join(dir, 'notes.txt');
  writeFileSync(notes, 'not a database\n'.repeat(500));
  // Tables of its own and no schema version; Chyme's tables without a schema version.
  const lookalike = join(dir, 'lookalike.db');
  const l = new Database(lookalike);
  l.exec('CREATE TABLE settings (id INTEGER); CREATE TABLE meals (id TEXT); CREATE TABLE sleep_sessions (id TEXT); CREATE TABLE api_keys (id TEXT); CREATE TABLE events (id TEXT); CREATE TABLE service_state (key TEXT)');
  l.close();
  for (const [path, detail] of [
    [bookmarks, /tables bookmarks/],
    [notes, /not an SQLite database file: SQLITE_NOTADB/],
    [lookalike, /tables settings, meals/],
  ] as const) {
    const before = sha256(path);
    assert.throws(() => openDatabase(path), (err: unknown) => err instanceof NotChymeDatabaseError && detail.test(err.message) && /is not a Chyme database/.test(err.message));
    assert.equal(sha256(path), before, path);
  }
});

test('an empty file, or an SQLite file with no schema at all, is initialised like a missing one', () => {
  const empty = tempDb();
  mkdirSync(dirname(empty), { recursive: true });
  writeFileSync(empty, '');
  const bare = join(dirname(empty), 'bare.db');
  const b = new Database(bare);
  b.pragma('journal_mode = WAL');
  b.close();
  for (const path of [empty, bare]) {
    const db = openDatabase(path);
    assert.equal(schemaVersion(db), latest, path);
    db.close();
  }
});

test('a failing migration rolls back entirely and keeps the previous version', () => {
  const path = tempDb();
  const db = openDatabase(path);
  const broken = [
    ...migrations,
    { version: latest + 1, name: 'half good', sql: 'CREATE TABLE added_first (x INTEGER); INSERT INTO no_such_table VALUES (1);' },
  ];
  assert.throws(() => migrate(db, broken), /no such table/);
  assert.equal(schemaVersion(db), latest);
  const added = db.prepare("SELECT name FROM sqlite_master WHERE name = 'added_first'").get();
  assert.equal(added, undefined, 'the first statement of the failed migration must be rolled back');
  db.close();
});

test('migrations apply in order, each recording its version', () => {
  const db = new Database(':memory:');
  migrate(db, [
    { version: 2, name: 'second', sql: 'ALTER TABLE t ADD COLUMN b INTEGER;' },
    { version: 1, name: 'first', sql: 'CREATE TABLE t (a INTEGER);' },
  ]);
  assert.equal(schemaVersion(db), 2);
  assert.deepEqual(
    (db.prepare('PRAGMA table_info(t)').all() as { name: string }[]).map((c) => c.name),
    ['a', 'b'],
  );
  db.close();
});

test('a new database and the folders made for it are readable by their owner only (0600, 0700)', { skip: process.platform === 'win32' }, () => {
  const path = tempDb();
  const previous = process.umask(0o022); // the usual umask, which would leave the file world-readable
  try {
    const db = openDatabase(path);
    db.prepare('CREATE TABLE t (x)').run(); // makes SQLite write the -wal file
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(`${path}-wal`).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(path)).mode & 0o777, 0o700);
    db.close();
  } finally {
    process.umask(previous);
  }
});

test('relaxedCommit commits without waiting for the disk, then every other commit waits again', () => {
  const db = openDatabase(tempDb());
  db.exec('CREATE TABLE t (a INTEGER)');
  const FULL = 2;
  relaxedCommit(db, () => db.prepare('INSERT INTO t VALUES (1)').run());
  assert.equal(db.pragma('synchronous', { simple: true }), FULL, 'back to FULL after the commit');
  assert.throws(() => relaxedCommit(db, () => { throw new Error('boom'); }), /boom/);
  assert.equal(db.pragma('synchronous', { simple: true }), FULL, 'back to FULL after a rollback');
  assert.throws(() => db.transaction(() => relaxedCommit(db, () => 0))(), /outside any transaction/);
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 1);
  db.close();
});
