/**
 * Faults of the storage under Chyme: a read-only database file or folder, a full disk (a real
 * tmpfs with a size limit), a database another program holds locked, and a damaged database file.
 * Each gives a clear error — at start, or a 503 with a documented code for a write — leaves the
 * stored data intact, and Chyme recovers once the fault is gone.
 *
 * Mounting a tmpfs and running the server as another user need root (this sandbox runs tests as
 * root); elsewhere those tests are skipped with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cliReachableByAll, runCli, startServe } from '../helpers/cli.js';
import { errorOf, startTestService } from '../helpers/service.js';

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'chyme-faults-'));
  dirs.push(d);
  return d;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

const meal = (description: string) => ({ timestamp: '2026-11-22T08:30:00Z', meal_type: 'lunch', description, macros: { calories: 500 } });

/** A database with one meal, closed cleanly (no -wal left). */
async function seededDatabase(dir: string): Promise<{ dbPath: string; mealId: string; key: string }> {
  const dbPath = join(dir, 'chyme.db');
  const serve = await startServe(['--db', dbPath, '--tz', 'UTC']);
  const key = runCli(['keys', 'create', '--name', 't', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
  const res = await fetch(`${serve.url}/v1/nutrition/meals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(meal('before the fault')),
  });
  const mealId = ((await res.json()) as { id: string }).id;
  assert.equal(await serve.stop(), 0);
  return { dbPath, mealId, key };
}

/** `chyme serve` as the unprivileged user nobody (root ignores file permissions), from a copy of
 * the CLI nobody can reach wherever the checkout sits. */
function serveAsNobody(cli: string, dbPath: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [cli, 'serve', '--port', '0', '--db', dbPath, '--quiet'], {
    uid: NOBODY,
    gid: NOBODY,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, HOME: '/nonexistent' },
  });
  return { status: r.status, stderr: r.stderr };
}

describe('a read-only database file or folder', { skip: isRoot ? false : 'needs root to run the server as another user' }, () => {
  test('refused at start with a clear message; the data is untouched; starts once writable', async () => {
    const dir = tempDir();
    const { dbPath, mealId } = await seededDatabase(dir);
    chmodSync(dir, 0o755);
    const reachable = cliReachableByAll();
    dirs.push(reachable.dir);
    const before = sha256(dbPath);

    // The file is root's, the folder too: nobody may read but not write either.
    const readOnlyFolder = serveAsNobody(reachable.cli, dbPath);
    assert.equal(readOnlyFolder.status, 6, readOnlyFolder.stderr);
    assert.match(readOnlyFolder.stderr, /read-only|cannot be used/i);
    assert.match(readOnlyFolder.stderr, /SQLITE_(READONLY|CANTOPEN)/);

    // The folder writable by nobody, the file still not: a read-only database file. (Chyme creates
    // its files 0600; made readable here so that the fault is "read-only", not "cannot open".)
    chownSync(dir, NOBODY, NOBODY);
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o644);
    const readOnlyFile = serveAsNobody(reachable.cli, dbPath);
    assert.equal(readOnlyFile.status, 6, readOnlyFile.stderr);
    assert.match(readOnlyFile.stderr, /read-only/i);
    assert.equal(sha256(dbPath), before, 'the database file was not changed');

    // Fixed: the file is nobody's too. It starts, with the data as it was.
    chownSync(dbPath, NOBODY, NOBODY);
    for (const f of readdirSync(dir)) chownSync(join(dir, f), NOBODY, NOBODY);
    chownSync(dir, 0, 0);
    chmodSync(dir, 0o777);
    const serve = await startServe(['--db', dbPath]);
    try {
      const key = runCli(['keys', 'create', '--name', 'after', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
      const got = await fetch(`${serve.url}/v1/nutrition/meals/${mealId}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(got.status, 200);
    } finally {
      await serve.stop();
    }
  });
});

describe('a full disk', { skip: isRoot ? false : 'needs root to mount a tmpfs' }, () => {
  test('writes get 503 storage_full and nothing is half written; reads go on; writes work again once space is freed', async (t) => {
    const mnt = tempDir();
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { encoding: 'utf8' });
    assert.equal(mounted.status, 0, `mount -t tmpfs failed: ${mounted.stderr}`);
    t.after(() => {
      spawnSync('umount', ['-l', mnt]);
    });
    const svc = await startTestService({ dir: mnt, backups: { automatic: false }, timezone: 'UTC' });
    t.after(() => svc.stop());
    const kept = await svc.request('POST', '/v1/nutrition/meals', { body: meal('kept') });
    assert.equal(kept.status, 201);

    // Fill the filesystem to the last block.
    const filler = join(mnt, 'filler');
    const chunk = Buffer.alloc(4096, 1);
    try {
      for (;;) appendFileSync(filler, chunk);
    } catch (err) {
      assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
    }
    // …then give a little back, so some writes still fit before the disk is full again.
    truncateSync(filler, statSync(filler).size - 400 * 1024);

    // Large writes until the database has to grow: each is refused whole, with the documented code.
    const big = (i: number) => ({ ...meal(`${i} ${'x'.repeat(1990)}`), foods: Array.from({ length: 100 }, (_, j) => ({ name: `food ${j} ${'y'.repeat(150)}`, calories: 1 })) });
    let refused: Awaited<ReturnType<typeof svc.request>> | undefined;
    const acked: string[] = [];
    for (let i = 0; i < 200 && !refused; i++) {
      const r = await svc.request('POST', '/v1/nutrition/meals', { body: big(i), headers: { 'Idempotency-Key': `full-${i}` } });
      if (r.status === 201) acked.push(r.body.id);
      else refused = r;
    }
    assert.ok(refused, 'the disk filled up');
    assert.ok(acked.length > 0, 'some writes fitted first');
    assert.equal(refused.status, 503);
    const e = errorOf(refused);
    assert.equal(e.type, 'api_error');
    assert.equal(e.code, 'storage_full');
    assert.match(e.message, /disk .* is full/);
    assert.ok(refused.headers.get('retry-after'));
    const failedKey = `full-${acked.length}`;

    // Reads go on; every acknowledged write is there.
    for (const id of [kept.body.id, ...acked]) assert.equal((await svc.request('GET', `/v1/nutrition/meals/${id}`)).status, 200);
    // A backup to the full disk fails clearly and leaves no partial file behind.
    const backup = await svc.request('POST', '/v1/backups');
    assert.equal(backup.status, 503);
    assert.equal(errorOf(backup).code, 'backup_disk_full');
    assert.deepEqual(existsSync(join(mnt, 'backups')) ? readdirSync(join(mnt, 'backups')) : [], []);

    // Space freed: the refused write, retried with its key, is applied once; the service is whole.
    rmSync(filler);
    const retry = await svc.request('POST', '/v1/nutrition/meals', { body: big(acked.length), headers: { 'Idempotency-Key': failedKey } });
    assert.equal(retry.status, 201, retry.text);
    const db = new Database(svc.dbPath, { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(db.prepare('SELECT count(*) FROM meals WHERE description LIKE ?').pluck().get(`${acked.length} x%`), 1);
      assert.equal(db.prepare('SELECT count(*) FROM meals').pluck().get(), acked.length + 2);
    } finally {
      db.close();
    }
    assert.equal((await svc.request('POST', '/v1/backups')).status, 201);
    t.diagnostic(`${acked.length} large meals fitted before the 2 MiB tmpfs was full`);
  });
});

describe('a database locked by another program', () => {
  /**
   * Reads sent one after another for as long as `pending` is unanswered; each must be answered.
   * Their times are a bound on hangs only (a read that waited on a writer took 5 to 13 s), never
   * on speed.
   */
  async function readWhilePending(url: string, headers: Record<string, string>, paths: string[], pending: Promise<unknown>): Promise<number> {
    let settled = false;
    void pending.then(() => (settled = true), () => (settled = true));
    let reads = 0;
    while (!settled) {
      for (const path of paths) {
        const started = Date.now();
        const read = await fetch(`${url}${path}`, { headers });
        assert.equal(read.status, 200, `${path} while locked: ${await read.text()}`);
        await read.arrayBuffer().catch(() => undefined);
        const ms = Date.now() - started;
        assert.ok(ms < 2000, `${path} was answered after ${ms} ms while another program held the lock`);
        reads++;
      }
    }
    return reads;
  }

  const lockedReads = (mealId: string) => [`/v1/nutrition/meals/${mealId}`, '/v1/digestion/state', '/v1/nutrition/meals?start_date=2026-11-20&end_date=2026-11-23'];

  test('a write waits 5 s on the event loop, then 503 storage_busy with nothing written; reads are answered all the while; writes work once the lock is gone', async () => {
    const dir = tempDir();
    const { dbPath, mealId, key } = await seededDatabase(dir);
    const serve = await startServe(['--db', dbPath]);
    const other = new Database(dbPath); // a second process (the service is chyme serve)
    try {
      other.pragma('busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE'); // holds the write lock, as a sync tool or a careless script might
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const started = Date.now();
      const posting = fetch(`${serve.url}/v1/nutrition/meals`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'locked-1' }, body: JSON.stringify(meal('while locked')) });
      const reads = await readWhilePending(serve.url, headers, lockedReads(mealId), posting);
      const blocked = await posting;
      const waited = Date.now() - started;
      assert.equal(blocked.status, 503);
      assert.equal(blocked.headers.get('retry-after'), '1');
      const body = (await blocked.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'storage_busy');
      assert.match(body.error.message, /locked/);
      assert.ok(waited >= 4500, `waited for the lock first (${waited} ms)`);
      // A bound on hangs: the busy handler's wait had it answer after 10 s.
      assert.ok(waited < 9000, `answered ${waited} ms after it was sent`);
      assert.ok(reads >= 3, `${reads} reads answered while the write waited`);
      other.exec('ROLLBACK');
      const retried = await fetch(`${serve.url}/v1/nutrition/meals`, { method: 'POST', headers: { ...headers, 'idempotency-key': 'locked-1' }, body: JSON.stringify(meal('while locked')) });
      assert.equal(retried.status, 201);
      assert.equal(other.prepare("SELECT count(*) FROM meals WHERE description = 'while locked'").pluck().get(), 1);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await serve.stop();
    }
  });

  test('a lock shorter than 5 s: the write waits it out on the event loop and lands, reads answered meanwhile', async () => {
    const dir = tempDir();
    const { dbPath, mealId, key } = await seededDatabase(dir);
    const serve = await startServe(['--db', dbPath]);
    const other = new Database(dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      let answered = false;
      const posting = fetch(`${serve.url}/v1/nutrition/meals`, { method: 'POST', headers, body: JSON.stringify(meal('after the lock')) });
      void posting.then(() => (answered = true));
      const lockEnds = new Promise<void>((resolve) => setTimeout(resolve, 1500));
      const reads = await readWhilePending(serve.url, headers, lockedReads(mealId), lockEnds);
      assert.ok(reads >= 3, `${reads} reads answered while the write waited`);
      assert.equal(answered, false, 'the write waits while the lock is held');
      other.exec('ROLLBACK');
      const created = await posting;
      assert.equal(created.status, 201, await created.clone().text());
      assert.equal(other.prepare("SELECT count(*) FROM meals WHERE description = 'after the lock'").pluck().get(), 1);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await serve.stop();
    }
  });

  test('locked at start: chyme serve stops with a message naming the lock', async () => {
    const dir = tempDir();
    const { dbPath } = await seededDatabase(dir);
    const other = new Database(dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      const r = runCli(['serve', '--port', '0', '--db', dbPath, '--quiet']);
      assert.equal(r.status, 6, r.stderr);
      assert.match(r.stderr, /SQLITE_BUSY/);
      assert.match(r.stderr, /locked/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('a damaged database file', () => {
  test('chyme serve refuses it with what to do, changes nothing, and a restored backup brings the data back', async () => {
    const dir = tempDir();
    const { dbPath, mealId, key } = await seededDatabase(dir);
    const backup = runCli(['backup', '--db', dbPath]);
    assert.equal(backup.status, 0, backup.stderr);
    const backupPath = backup.stdout.trim().split('\n').at(-1)!;

    // Damage every page after the first (the schema survives the header check, the tables do not).
    const bytes = readFileSync(dbPath);
    bytes.fill(0x3c, 4096);
    writeFileSync(dbPath, bytes);
    const damaged = sha256(dbPath);

    const r = runCli(['serve', '--port', '0', '--db', dbPath, '--quiet']);
    assert.equal(r.status, 5, r.stderr);
    assert.match(r.stderr, /SQLITE_CORRUPT|SQLITE_NOTADB/);
    assert.match(r.stderr, /damaged|not a Chyme database/);
    assert.match(r.stderr, /chyme (check|restore)/);
    assert.equal(sha256(dbPath), damaged, 'nothing written to the damaged file');
    const check = runCli(['check', '--db', dbPath]);
    assert.equal(check.status, 5);
    assert.match(check.stderr, /chyme restore/);

    // Garbage from the first byte: "not a database", the same clear refusal.
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, Buffer.alloc(16384, 0x41));
    const g = runCli(['serve', '--port', '0', '--db', garbage, '--quiet']);
    assert.equal(g.status, 5, g.stderr);
    assert.match(g.stderr, /SQLITE_NOTADB/);

    // Recovery: restore the backup (no server runs), then it starts with the data.
    const restored = runCli(['restore', backupPath, '--db', dbPath]);
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(restored.stdout, /was damaged/);
    const kept = restored.stdout.trim().split('\n').at(-1)!;
    assert.equal(sha256(kept), damaged, 'the damaged bytes are kept aside, as they were');
    const serve = await startServe(['--db', dbPath]);
    try {
      const got = await fetch(`${serve.url}/v1/nutrition/meals/${mealId}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(got.status, 200);
    } finally {
      await serve.stop();
    }
  });
});
