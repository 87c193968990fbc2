/**
 * Backups through the API and the running service's own schedule, with a manual clock: backups
 * are whole and checked, taken once a day, pruned by retention, failures recorded and reported,
 * and a restore swaps the data in (or refuses a bad file without touching anything).
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import fc from 'fast-check';
import { after, before, describe, test } from 'node:test';
import { backupFileName, backupsToPrune, type BackupFile } from '../../server/backups/files.js';
import { inspectDatabaseFile, LATEST_SCHEMA_VERSION } from '../../server/backups/inspect.js';
import { openDatabase } from '../../server/db/connection.js';
import { absolutePath } from '../../server/fields.js';
import { migrations } from '../../server/db/migrations.js';
import { writeServiceState } from '../../server/db/service-state.js';
import { errorOf, startTestService, type TestService } from '../helpers/service.js';
import { MEAL } from '../webhooks/helpers.js';

const DAY = 24 * 3600_000;

function rows(dbPath: string, sql: string): unknown[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('backups API', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ backups: { automatic: false } });
  });
  after(() => t.stop());

  test('back up now writes a whole, checked, single-file copy beside the database', async () => {
    assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: MEAL })).status, 201);
    const r = await t.request('POST', '/v1/backups');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.object, 'backup');
    assert.equal(r.body.kind, 'manual');
    assert.equal(r.body.path, join(t.dir, 'backups', r.body.id));
    assert.equal(r.body.created_at, '2026-11-22T12:00:00Z');
    const report = inspectDatabaseFile(r.body.path);
    assert.equal(report.counts.meals, 1);
    assert.equal(report.integrity, 'ok');
    assert.equal(statSync(r.body.path).mode & 0o777, 0o600, 'only the owner may read a backup');
    // A single file: no write-ahead log beside it, and no temporary file left.
    assert.deepEqual(readdirSync(join(t.dir, 'backups')), [r.body.id]);
    const list = await t.request('GET', '/v1/backups');
    assert.deepEqual(list.body.data.map((b: { id: string }) => b.id), [r.body.id]);
    const status = await t.request('GET', '/v1/backups/status');
    assert.equal(status.body.last_backup.id, r.body.id);
    assert.equal(status.body.failing, false);
    assert.equal(status.body.next_due_at, '2026-11-23T12:00:00Z');
  });

  test('settings: defaults, validation, and a folder of the user\'s choosing', async () => {
    const s = await t.request('GET', '/v1/backups/settings');
    assert.deepEqual(s.body, {
      object: 'backup_settings',
      folder: join(t.dir, 'backups'),
      default_folder: join(t.dir, 'backups'),
      folder_is_default: true,
      keep_daily: 7,
      keep_weekly: 4,
    });
    for (const [body, param] of [
      [{ keep_daily: 0 }, 'keep_daily'],
      [{ keep_weekly: -1 }, 'keep_weekly'],
      [{ folder: 'relative/dir' }, 'folder'],
      [{ folder: join(t.dir, 'chyme.db', 'sub') }, 'folder'],
      [{ colour: 'red' }, 'colour'],
    ] as const) {
      const r = await t.request('PATCH', '/v1/backups/settings', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(errorOf(r).param, param);
    }
    const chosen = join(t.dir, 'elsewhere');
    const r = await t.request('PATCH', '/v1/backups/settings', { body: { folder: chosen, keep_daily: 3 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.folder, chosen);
    assert.equal(r.body.folder_is_default, false);
    assert.equal(r.body.keep_daily, 3);
    const b = await t.request('POST', '/v1/backups');
    assert.equal(b.body.path, join(chosen, b.body.id));
    assert.equal((await t.request('PATCH', '/v1/backups/settings', { body: { folder: null } })).body.folder_is_default, true);
  });

  test('admin scope only', async () => {
    const key = t.keyWith('nutrition:read', 'nutrition:write');
    for (const [method, path] of [['GET', '/v1/backups'], ['POST', '/v1/backups'], ['GET', '/v1/backups/status'], ['GET', '/v1/backups/settings']]) {
      const r = await t.request(method!, path!, { key });
      assert.equal(r.status, 403, path);
    }
  });
});

describe('automatic backups', () => {
  let t: TestService;
  before(async () => {
    // The timer is off; the test drives the same check the timer runs (tick) with the clock.
    t = await startTestService({ backups: { automatic: false } });
  });
  after(() => t.stop());

  test('none while the database holds nothing, then one a day, pruned to N daily and M weekly', async () => {
    const { backups } = t.service;
    assert.equal(await backups.tick(), undefined, 'an empty database is not backed up');
    await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
    const first = await backups.tick();
    assert.equal(first?.kind, 'auto');
    assert.equal(await backups.tick(), undefined, 'not due again the same day');
    t.clock.advance(DAY - 1000);
    assert.equal(await backups.tick(), undefined);
    t.clock.advance(1000);
    assert.ok(await backups.tick(), 'due 24 h after the last one');

    await t.request('PATCH', '/v1/backups/settings', { body: { keep_daily: 3, keep_weekly: 2 } });
    for (let i = 0; i < 20; i++) {
      t.clock.advance(DAY);
      assert.ok(await backups.tick());
    }
    const kept = backups.list();
    // 3 newest days, plus the newest of the previous week (the current week's newest is a daily one).
    assert.equal(kept.length, 4, kept.map((b) => b.name).join(' '));
    const newest = t.clock.now();
    assert.deepEqual(
      kept.slice(0, 3).map((b) => b.createdMs),
      [newest, newest - DAY, newest - 2 * DAY],
    );
  });

  test('a folder that cannot be written: the failure is recorded, reported, retried hourly, and clears once fixed', async () => {
    const { backups } = t.service;
    const folder = join(t.dir, 'usb');
    assert.equal((await t.request('PATCH', '/v1/backups/settings', { body: { folder } })).status, 200);
    // The folder is gone and a file took its name (root ignores permission bits, so chmod cannot fake this).
    rmSync(folder, { recursive: true });
    writeFileSync(folder, 'not a folder');
    t.clock.advance(DAY);
    await assert.rejects(backups.tick(), /not writable/);
    const status = await t.request('GET', '/v1/backups/status');
    assert.equal(status.body.failing, true);
    assert.equal(status.body.last_error.code, 'backup_folder_not_writable');
    assert.match(status.body.last_error.message, /usb/);
    assert.equal(status.body.next_due_at, new Date(t.clock.now() + 3600_000).toISOString().replace('.000Z', 'Z'));
    assert.equal(await backups.tick(), undefined, 'not retried at every check');
    const now = await t.request('POST', '/v1/backups');
    assert.equal(now.status, 503);
    assert.equal(errorOf(now).code, 'backup_folder_not_writable');
    assert.equal(now.headers.get('retry-after'), '60');

    rmSync(folder);
    t.clock.advance(3600_000);
    assert.ok(await backups.tick(), 'retried an hour later, and it works now');
    assert.equal((await t.request('GET', '/v1/backups/status')).body.failing, false);
  });
});

describe('retention', () => {
  const make = (createdMs: number, kind: BackupFile['kind'] = 'auto'): BackupFile => {
    const name = backupFileName(createdMs, kind);
    return { name, path: name, kind, createdMs, sizeBytes: 1 };
  };
  test('keeps the newest automatic copy of each of N days and M weeks, and every other kind', () => {
    const start = Date.UTC(2026, 10, 2, 10); // a Monday
    const all = [...Array.from({ length: 30 }, (_, i) => make(start + i * DAY)), make(start + 29 * DAY - 3600_000, 'manual'), make(start, 'pre-restore')];
    const pruned = new Set(backupsToPrune(all, 2, 3, 'UTC').map((b) => b.name));
    const kept = all.filter((b) => !pruned.has(b.name)).map((b) => new Date(b.createdMs).toISOString().slice(0, 13));
    assert.deepEqual(kept.sort(), ['2026-11-02T10', '2026-11-22T10', '2026-11-29T10', '2026-11-30T10', '2026-12-01T09', '2026-12-01T10'].sort());
  });
});

describe('restore through the running service', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ backups: { automatic: false } });
  });
  after(() => t.stop());

  test('swaps the backup in, keeps a pre-restore copy, and the service carries on', async () => {
    const kept = await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'kept' } });
    const backup = await t.request('POST', '/v1/backups');
    t.clock.advance(60_000);
    const later = await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'after the backup' } });

    const r = await t.request('POST', `/v1/backups/${backup.body.id}/restore`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.object, 'restore');
    assert.equal(r.body.restored_from.meals, 1);
    assert.equal(r.body.safety_backup.kind, 'pre-restore');
    assert.equal(inspectDatabaseFile(r.body.safety_backup.path).counts.meals, 2, 'the pre-restore copy holds the data as it was');

    assert.equal((await t.request('GET', `/v1/nutrition/meals/${kept.body.id}`)).status, 200);
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${later.body.id}`)).status, 404);
    // Writes, events and the scheduler work on the restored database.
    const next = await t.request('POST', '/v1/nutrition/meals', { body: { ...MEAL, description: 'after the restore' } });
    assert.equal(next.status, 201);
    assert.ok(rows(t.dbPath, "SELECT id FROM events WHERE type = 'meal.created'").length >= 2);
    t.service.runScheduler();
    assert.deepEqual(rows(t.dbPath, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);

    // Restoring the pre-restore copy brings the later meal back.
    const undo = await t.request('POST', `/v1/backups/${r.body.safety_backup.id}/restore`);
    assert.equal(undo.status, 200, undo.text);
    assert.equal((await t.request('GET', `/v1/nutrition/meals/${later.body.id}`)).status, 200);
  });

  test('a restore waits for a write another connection is making (an import\'s worker), then swaps; writes meanwhile get 503', async () => {
    const backup = await t.request('POST', '/v1/backups');
    // What an import's worker does: the gate taken, then SQLite's write lock from its own connection.
    // (A restore asked for over HTTP now would wait at the gate before starting; this one is
    // already under way when the import takes the gate, as when the import got there first.)
    const releaseGate = await t.service.app.writes.acquire();
    const other = new Database(t.dbPath);
    other.prepare('BEGIN IMMEDIATE').run();
    other.prepare("UPDATE settings SET units = 'imperial'").run();
    let restored = false;
    const restoring = t.service.restore(backup.body.path).then((r) => {
      restored = true;
      return r;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(restored, false, 'the swap waits for the other connection\'s transaction');
      const during = await t.request('POST', '/v1/nutrition/meals', { body: MEAL });
      assert.equal(during.status, 503);
      assert.equal(errorOf(during).code, 'restore_in_progress');
    } finally {
      other.prepare('COMMIT').run();
      other.close();
      releaseGate();
    }
    const r = await restoring;
    // The pre-restore copy was taken after the other write committed: it holds that write.
    assert.deepEqual(rows(r.safetyBackup.path, 'SELECT units FROM settings'), [{ units: 'imperial' }]);
    assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: MEAL })).status, 201);
  });

  test('a corrupt, foreign or newer file is refused with a clear error and nothing changes', async () => {
    const folder = join(t.dir, 'backups');
    mkdirSync(folder, { recursive: true });
    const before = rows(t.dbPath, 'SELECT id FROM meals ORDER BY id');
    const safetyCopies = () => readdirSync(folder).filter((n) => n.includes('pre-restore')).length;
    const safetyBefore = safetyCopies();
    t.clock.advance(1000);
    const garbage = backupFileName(t.clock.now(), 'manual');
    writeFileSync(join(folder, garbage), Buffer.alloc(8192, 7));
    t.clock.advance(1000);
    const foreign = backupFileName(t.clock.now(), 'manual');
    const f = new Database(join(folder, foreign));
    f.exec('CREATE TABLE notes (x)');
    f.close();
    t.clock.advance(1000);
    const newer = (await t.request('POST', '/v1/backups')).body;
    const n = new Database(newer.path);
    n.pragma('user_version = 999');
    n.close();
    t.clock.advance(1000);
    const damaged = (await t.request('POST', '/v1/backups')).body;
    // Overwrite pages in the middle of the file: a real SQLite file, whose b-trees no longer hold together.
    const bytes = readFileSync(damaged.path);
    bytes.fill(0xab, 4096 * 3, bytes.length);
    writeFileSync(damaged.path, bytes);

    for (const [id, code] of [
      [garbage, 'backup_not_chyme'],
      [foreign, 'backup_not_chyme'],
      [newer.id, 'backup_too_new'],
      [damaged.id, 'backup_corrupt'],
    ] as const) {
      const r = await t.request('POST', `/v1/backups/${id}/restore`);
      assert.equal(r.status, 400, `${id}: ${r.text}`);
      assert.equal(errorOf(r).code, code, id);
      assert.match(errorOf(r).message, /Chyme|damaged|integrity|newer|not an SQLite/);
    }
    // Any id that is not in the list names nothing (CONTRACT §4), whatever its shape: a path leads to no file.
    for (const id of ['chyme-20200101T000000000Z-auto.db', '..%2Fchyme.db', 'not-a-backup']) {
      const missing = await t.request('POST', `/v1/backups/${id}/restore`);
      assert.equal(missing.status, 404, id);
      assert.equal(errorOf(missing).code, 'resource_missing', id);
    }
    assert.deepEqual(rows(t.dbPath, 'SELECT id FROM meals ORDER BY id'), before);
    assert.equal(safetyCopies(), safetyBefore, 'no safety copy for a refused file');
    assert.equal(existsSync(`${t.dbPath}.restoring`), false);
  });
});


describe('schema versions', () => {
  test('after a migration the service takes a backup at once', async () => {
    const first = await startTestService({ backups: { automatic: false }, keepDir: true });
    await first.request('POST', '/v1/nutrition/meals', { body: MEAL });
    assert.ok(await first.service.backups.backupNow('manual'));
    // As if the last backup had been taken before the newest migration ran.
    writeServiceState(first.service.app.db, 'backups.schema_version', LATEST_SCHEMA_VERSION - 1);
    await first.stop();

    const second = await startTestService({ dir: first.dir, backups: { automatic: true, checkIntervalMs: 3600_000 } });
    try {
      const deadline = Date.now() + 10_000;
      while (!second.service.backups.list().some((b) => b.kind === 'migration') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const migration = second.service.backups.list().find((b) => b.kind === 'migration');
      assert.ok(migration, 'a migration backup');
      assert.equal(inspectDatabaseFile(migration.path).schemaVersion, LATEST_SCHEMA_VERSION);
    } finally {
      await second.stop();
      rmSync(first.dir, { recursive: true, force: true });
    }
  });

  test('before an upgrade migrates a database, a copy of it as it was is kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chyme-premigration-'));
    const old = openDatabase(join(dir, 'chyme.db'), { migrations: migrations.filter((m) => m.version <= 2) });
    old.prepare("INSERT INTO settings (id, timezone, user_id, updated_ms) VALUES (1, 'UTC', 'user_old', 0)").run();
    old.prepare(
      "INSERT INTO meals (id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, created_ms, updated_ms) VALUES ('meal_old1', ?, 0, '2026-11-20', 'dinner', 'from v2', 600, 0, 0)",
    ).run(Date.UTC(2026, 10, 20, 19));
    old.close();
    const t = await startTestService({ dir, backups: { automatic: false } });
    try {
      const copies = t.service.backups.list().filter((b) => b.kind === 'pre-migration');
      assert.equal(copies.length, 1);
      const report = inspectDatabaseFile(copies[0]!.path);
      assert.equal(report.schemaVersion, 2, 'the copy is the database as it was before the upgrade');
      assert.equal(report.counts.meals, 1);
      assert.equal((await t.request('GET', '/v1/nutrition/meals/meal_old1')).status, 200);
    } finally {
      await t.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    // A new, empty database is created without one.
    const fresh = await startTestService({ backups: { automatic: false } });
    assert.deepEqual(fresh.service.backups.list(), []);
    await fresh.stop();
  });

  test('a backup from an older schema is migrated as it is restored', async () => {
    const t = await startTestService({ backups: { automatic: false } });
    try {
      const folder = join(t.dir, 'backups');
      mkdirSync(folder, { recursive: true });
      const name = backupFileName(t.clock.now() - DAY, 'auto');
      const old = openDatabase(join(folder, name), { migrations: migrations.filter((m) => m.version <= 2) });
      old.prepare("INSERT INTO settings (id, timezone, user_id, updated_ms) VALUES (1, 'UTC', 'user_old', 0)").run();
      old.prepare(
        "INSERT INTO meals (id, timestamp_ms, utc_offset_min, day, meal_type, description, calories, created_ms, updated_ms) VALUES ('meal_old1', ?, 0, '2026-11-20', 'dinner', 'from v2', 600, 0, 0)",
      ).run(Date.UTC(2026, 10, 20, 19));
      old.pragma('journal_mode = DELETE');
      old.close();
      const r = await t.request('POST', `/v1/backups/${name}/restore`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.restored_from.schema_version, 2);
      // The old file had no API keys: the keys in force now are kept across a restore.
      const got = await t.request('GET', '/v1/nutrition/meals/meal_old1');
      assert.equal(got.status, 200);
      assert.equal(got.body.calories_source, 'logged');
      assert.equal(rows(t.dbPath, 'PRAGMA user_version')[0] && (rows(t.dbPath, 'PRAGMA user_version')[0] as { user_version: number }).user_version, LATEST_SCHEMA_VERSION);
    } finally {
      await t.stop();
    }
  });
});

describe('the backup folder field', () => {
  test('its documented pattern accepts exactly the absolute paths of this OS family (node:path isAbsolute), without NUL', () => {
    const folder = absolutePath(4096);
    const pathLike = fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z]?:?[\\/.]{0,3}[a-z\u0000 /]{0,8}$/));
    fc.assert(
      fc.property(pathLike, (s) => folder.safeParse(s).success === (isAbsolute(s) && !s.includes('\u0000'))),
      { numRuns: 2000 },
    );
    assert.equal(folder.safeParse('relative/dir').success, false);
    assert.equal(folder.safeParse(tmpdir()).success, true);
  });
});
