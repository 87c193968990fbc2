/**
 * The data commands against a real `chyme serve` holding the same file open (WAL), and with no
 * server at all: backup, restore (through the server and offline), export, check and link.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, startServe } from '../helpers/cli.js';

const tempDir = () => mkdtempSync(join(tmpdir(), 'chyme-data-'));

function lastLine(s: string): string {
  return s.trim().split('\n').at(-1)!;
}

/**
 * One request on its own connection. The CLI commands between requests can take longer than the
 * server's keep-alive, and a pooled connection closed by the server just as it is reused fails
 * the request for a reason that has nothing to do with what is tested.
 */
function request(url: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function api(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await request(url + path, method, { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body ? JSON.stringify(body) : undefined);
  return { status: res.status, body: JSON.parse(res.text) as any };
}

const meal = (description: string) => ({ timestamp: '2026-11-22T08:30:00Z', meal_type: 'breakfast', description, macros: { calories: 300 } });

describe('data commands beside a running server', () => {
  test('backup, check, export, link and restore all work while chyme serve has the file open', async () => {
    const dir = tempDir();
    const db = join(dir, 'chyme.db');
    const serve = await startServe(['--db', db, '--tz', 'UTC']);
    try {
      const key = lastLine(runCli(['keys', 'create', '--name', 't', '--scopes', 'all', '--db', db]).stdout);
      const kept = await api(serve.url, key, 'POST', '/v1/nutrition/meals', meal('kept'));
      assert.equal(kept.status, 201);

      const backup = runCli(['backup', '--db', db]);
      assert.equal(backup.status, 0, backup.stderr);
      const backupPath = lastLine(backup.stdout);
      assert.match(backupPath, /backups\/chyme-\d{8}T\d{9}Z-manual\.db$/);
      const copy = new Database(backupPath, { readonly: true });
      assert.equal(copy.prepare('SELECT count(*) FROM meals').pluck().get(), 1);
      assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'a backup is one self-contained file');
      copy.close();
      const elsewhere = join(dir, 'usb');
      const to = runCli(['backup', '--to', elsewhere, '--db', db]);
      assert.equal(to.status, 0, to.stderr);
      assert.equal(readdirSync(elsewhere).length, 1);

      const later = await api(serve.url, key, 'POST', '/v1/nutrition/meals', meal('after the backup'));

      const check = runCli(['check', '--json', '--db', db]);
      assert.equal(check.status, 0, check.stderr);
      const report = JSON.parse(check.stdout);
      assert.equal(report.integrity, 'ok');
      assert.equal(report.counts.meals, 2);
      assert.equal(report.running_server, serve.url);
      assert.equal(report.last_backup.path, backupPath);
      assert.match(runCli(['check', '--db', db]).stdout, /integrity check ok[\s\S]*2 meals[\s\S]*running on it/);

      const exported = runCli(['export', '--db', db]);
      assert.equal(exported.status, 0, exported.stderr);
      const doc = JSON.parse(exported.stdout);
      assert.equal(doc.format, 'chyme.export');
      assert.deepEqual(doc.meals.map((m: any) => m.description).sort(), ['after the backup', 'kept']);
      const csvFile = join(dir, 'meals.csv');
      assert.equal(runCli(['export', '--format', 'csv', '--out', csvFile, '--db', db]).status, 0);
      const csv = readFileSync(csvFile, 'utf8').trim().split('\r\n');
      assert.equal(csv.length, 3);
      assert.match(csv[0]!, /^id,day,timestamp/);
      assert.equal(runCli(['export', '--format', 'xml', '--db', db]).status, 2);

      // A fresh one-time link, accepted by the running server, and only once.
      const link = runCli(['link', '--db', db]);
      assert.equal(link.status, 0, link.stderr);
      const appUrl = /^App: (http:\/\/\S+)$/m.exec(link.stdout)![1]!;
      assert.ok(appUrl.startsWith(`${serve.url}/?token=`));
      const first = await request(appUrl);
      assert.match(String(first.headers['set-cookie'] ?? ''), /chyme_session=/);
      const second = await request(appUrl);
      assert.doesNotMatch(String(second.headers['set-cookie'] ?? ''), /chyme_session=/, 'the token works once');

      // Restore through the running server: the later meal goes, the server carries on.
      const restore = runCli(['restore', backupPath, '--db', db]);
      assert.equal(restore.status, 0, restore.stderr);
      const safety = lastLine(restore.stdout);
      assert.match(safety, /pre-restore\.db$/);
      assert.equal((await api(serve.url, key, 'GET', `/v1/nutrition/meals/${later.body.id}`)).status, 404);
      assert.equal((await api(serve.url, key, 'GET', `/v1/nutrition/meals/${kept.body.id}`)).status, 200);
      assert.equal((await api(serve.url, key, 'POST', '/v1/nutrition/meals', meal('after the restore'))).status, 201);
      const safe = new Database(safety, { readonly: true });
      assert.equal(safe.prepare('SELECT count(*) FROM meals').pluck().get(), 2, 'the replaced data was saved first');
      safe.close();

      // Refused files: nothing changes, a clear message, exit 5.
      const garbage = join(dir, 'garbage.db');
      writeFileSync(garbage, 'this is not a database at all, just text padding it out'.repeat(200));
      const foreign = join(dir, 'foreign.db');
      const f = new Database(foreign);
      f.exec('CREATE TABLE notes (body TEXT)');
      f.close();
      const refusedNewer = (() => {
        const raw = new Database(backupPath, { readonly: true });
        raw.prepare('VACUUM INTO ?').run(join(dir, 'newer2.db'));
        raw.close();
        const w = new Database(join(dir, 'newer2.db'));
        w.pragma('user_version = 99');
        w.close();
        return join(dir, 'newer2.db');
      })();
      for (const [file, pattern] of [
        [garbage, /not an SQLite database/],
        [foreign, /not a Chyme one/],
        [refusedNewer, /newer Chyme/],
        [join(dir, 'missing.db'), /Cannot read/],
      ] as const) {
        const r = runCli(['restore', file, '--db', db]);
        assert.equal(r.status, 5, `${file}: ${r.stderr}`);
        assert.match(r.stderr, /Refused, nothing changed/);
        assert.match(r.stderr, pattern);
      }
      assert.equal((await api(serve.url, key, 'GET', `/v1/nutrition/meals/${kept.body.id}`)).status, 200);
    } finally {
      await serve.stop();
    }
  });
});

describe('data commands with no server', () => {
  test('restore swaps the file in after a safety backup; link says no server runs; check refuses a damaged file', async () => {
    const dir = tempDir();
    const db = join(dir, 'chyme.db');
    const serve = await startServe(['--db', db]);
    const key = lastLine(runCli(['keys', 'create', '--name', 't', '--scopes', 'all', '--db', db]).stdout);
    await api(serve.url, key, 'POST', '/v1/nutrition/meals', meal('one'));
    const backupPath = lastLine(runCli(['backup', '--db', db]).stdout);
    await api(serve.url, key, 'POST', '/v1/nutrition/meals', meal('two'));
    assert.equal(await serve.stop(), 0);

    const link = runCli(['link', '--db', db]);
    assert.equal(link.status, 6);
    assert.match(link.stderr, /No Chyme is running/);

    const r = runCli(['restore', backupPath, '--db', db]);
    assert.equal(r.status, 0, r.stderr);
    const check = JSON.parse(runCli(['check', '--json', '--db', db]).stdout);
    assert.equal(check.counts.meals, 1);
    assert.equal(check.running_server, null);
    assert.equal(existsSync(`${db}.restoring`), false);

    // A damaged database: check names the problem and how to recover; serve refuses to start on it.
    const bytes = readFileSync(db);
    bytes.fill(0x5a, 4096, bytes.length);
    writeFileSync(db, bytes);
    const bad = runCli(['check', '--db', db]);
    assert.equal(bad.status, 5);
    assert.match(bad.stderr, /damaged|integrity/);
    assert.match(bad.stderr, /chyme restore/);

    assert.equal(runCli(['check', '--db', join(dir, 'nothing.db')]).status, 5);
    assert.equal(existsSync(join(dir, 'nothing.db')), false, 'check never creates a database');
    assert.equal(runCli(['backup', '--db', join(dir, 'nothing.db')]).status, 5);
  });
});
