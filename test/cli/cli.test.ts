import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ROOT, runCli, startServe } from '../helpers/cli.js';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'chyme-cli-')), 'chyme.db');

describe('chyme serve', () => {
  test('prints the two ready lines, serves the API, and stops cleanly on SIGTERM', async () => {
    const db = tempDb();
    const serve = await startServe(['--db', db, '--tz', 'America/New_York']);
    assert.match(serve.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(serve.url).port, '0');
    assert.match(serve.appUrl, new RegExp(`^${serve.url}/\\?token=[0-9A-Za-z]{32}$`));
    const lines = serve.stdout().trim().split('\n');
    assert.match(lines[0]!, /^Chyme listening on /);
    assert.match(lines[1]!, /^App: /);

    const health = await fetch(`${serve.url}/v1/health`);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');

    // The CLI can create a key while the server holds the same file open.
    const created = runCli(['keys', 'create', '--name', 'script', '--scopes', 'nutrition:read,nutrition:write,admin', '--db', db]);
    assert.equal(created.status, 0, created.stderr);
    const secret = created.stdout.trim().split('\n').at(-1)!;
    assert.match(secret, /^chy_[0-9A-Za-z]{32,}$/);
    const settings = await fetch(`${serve.url}/v1/settings`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(settings.status, 200);
    assert.equal(((await settings.json()) as { timezone: string }).timezone, 'America/New_York', '--tz is stored as the user time zone');

    // An in-flight request finishes during shutdown. It is made in flight for sure, whatever the
    // machine's load: its headers and half its body are sent, and a second request answered after
    // them shows the server has them; then SIGTERM, then the rest of the body.
    const body = JSON.stringify({ timestamp: '2026-11-22T12:00:00Z', meal_type: 'lunch', description: 'In flight at shutdown', macros: { calories: 500 } });
    let finish!: () => void;
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${serve.url}/v1/nutrition/meals`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.write(body.slice(0, 20));
      finish = () => req.end(body.slice(20));
    });
    assert.equal((await fetch(`${serve.url}/v1/health`)).status, 200);
    const stopped = serve.stop('SIGTERM');
    finish();
    assert.equal(await inFlight, 201);
    assert.equal(await stopped, 0);

    // The database was closed cleanly: no WAL left to recover, and it opens fine.
    const check = new Database(db);
    assert.equal(check.pragma('integrity_check', { simple: true }), 'ok');
    check.close();
  });

  test('--rate-limit sets the per-key limit', async () => {
    const db = tempDb();
    const serve = await startServe(['--db', db, '--rate-limit', '1/2']);
    try {
      const created = runCli(['keys', 'create', '--name', 'script', '--scopes', 'nutrition:read', '--db', db]);
      const secret = created.stdout.trim().split('\n').at(-1)!;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await fetch(`${serve.url}/v1/nutrition/meals?start_date=2026-01-01&end_date=2026-01-31`, { headers: { authorization: `Bearer ${secret}` } })).status);
      }
      assert.deepEqual(statuses.slice(0, 2), [200, 200], 'the burst of 2 is served');
      assert.ok(statuses.slice(2).includes(429), `then the key is limited: ${statuses.join(', ')}`);
    } finally {
      await serve.stop();
    }
  });

  test('a server record left by a crash does not stop it, even when its process id is alive again', async () => {
    const db = tempDb();
    runCli(['keys', 'create', '--name', 'x', '--scopes', 'all', '--db', db]);
    // As after a power cut and a reboot: the recorded id now belongs to another program (this one).
    const raw = new Database(db);
    raw.prepare("INSERT INTO service_state (key, value_json) VALUES ('server.instance', ?)").run(JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid, startedMs: 0 }));
    raw.close();
    const serve = await startServe(['--db', db]);
    assert.equal(await serve.stop(), 0);
  });

  test('SIGINT stops it too', async () => {
    const serve = await startServe(['--db', tempDb()]);
    assert.equal(await serve.stop('SIGINT'), 0);
  });

  test('bad flags exit 2 with a usage message', () => {
    for (const args of [
      ['serve', '--port', 'http'],
      ['serve', '--port', '70000'],
      ['serve', '--tz', 'Nowhere/Land'],
      ['serve', '--bogus'],
      ['serve', '--rate-limit', 'fast'],
      ['serve', '--rate-limit', '0'],
      ['serve', '--rate-limit', '10/0'],
      ['frobnicate'],
    ]) {
      const r = runCli(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /Usage:/);
    }
  });

  test('a port already in use is a clear error', async () => {
    const first = await startServe(['--db', tempDb()]);
    const port = new URL(first.url).port;
    const r = runCli(['serve', '--port', port, '--db', tempDb()]);
    assert.equal(r.status, 4);
    assert.match(r.stderr, /already running|in use/i);
    await first.stop();
  });
});

describe('chyme keys', () => {
  test('create prints the secret alone on the last line; list shows it without the secret; revoke removes it', () => {
    const db = tempDb();
    const created = runCli(['keys', 'create', '--name', 'Home Assistant', '--scopes', 'digestion:read', '--db', db]);
    assert.equal(created.status, 0, created.stderr);
    const lines = created.stdout.trim().split('\n');
    const secret = lines.at(-1)!;
    assert.match(secret, /^chy_[0-9A-Za-z]{32,}$/);
    const id = /(key_[0-9A-Za-z]+)/.exec(created.stdout)![1]!;

    const list = runCli(['keys', 'list', '--json', '--db', db]);
    const keys = JSON.parse(list.stdout);
    assert.deepEqual(keys.map((k: any) => [k.id, k.name, k.scopes]), [[id, 'Home Assistant', ['digestion:read']]]);
    assert.equal(list.stdout.includes(secret), false);
    assert.match(runCli(['keys', 'list', '--db', db]).stdout, new RegExp(id));

    const revoked = runCli(['keys', 'revoke', id, '--db', db]);
    assert.equal(revoked.status, 0);
    assert.deepEqual(JSON.parse(runCli(['keys', 'list', '--json', '--db', db]).stdout), []);
    const again = runCli(['keys', 'revoke', id, '--db', db]);
    assert.equal(again.status, 2);
  });

  test('create refuses missing names and unknown scopes; --scopes all grants every scope', () => {
    const db = tempDb();
    assert.equal(runCli(['keys', 'create', '--scopes', 'admin', '--db', db]).status, 2);
    const bad = runCli(['keys', 'create', '--name', 'x', '--scopes', 'nutrition:read,root', '--db', db]);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown scope "root"/);
    const all = runCli(['keys', 'create', '--name', 'x', '--scopes', 'all', '--db', db]);
    assert.equal(all.status, 0);
    assert.equal(JSON.parse(runCli(['keys', 'list', '--json', '--db', db]).stdout)[0].scopes.length, 8);
  });

  test('a database from a newer Chyme is refused with a clear message', () => {
    const db = tempDb();
    runCli(['keys', 'create', '--name', 'x', '--scopes', 'all', '--db', db]);
    const raw = new Database(db);
    raw.pragma('user_version = 999');
    raw.close();
    const r = runCli(['keys', 'list', '--db', db]);
    assert.equal(r.status, 3);
    assert.match(r.stderr, /newer Chyme/);
  });
});

describe('npm start', () => {
  const electronBinary = (() => {
    try {
      const path = createRequire(import.meta.url)('electron') as unknown;
      return typeof path === 'string' && existsSync(path);
    } catch {
      return false;
    }
  })();

  test('without the Electron binary it says so and falls back to chyme serve', { skip: electronBinary ? 'Electron is installed here' : false }, async () => {
    const child = spawn(process.execPath, [join(ROOT, 'electron', 'start.mjs'), '--port', '0', '--db', tempDb(), '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    try {
      const deadline = Date.now() + 20_000;
      while (!/^App: http:\/\/\S+$/m.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      assert.match(err, /Electron is unavailable/);
      // Scripts read stdout: exactly the two ready lines, and no other line mentions "App:".
      const lines = out.trim().split('\n');
      assert.equal(lines.length, 2, out);
      assert.match(lines[0]!, /^Chyme listening on http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(lines[1]!, /^App: http:\/\/127\.0\.0\.1:\d+\/\?token=\w+$/);
      assert.doesNotMatch(err, /App:/);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
