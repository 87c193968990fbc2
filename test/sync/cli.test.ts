import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as Automerge from '@automerge/automerge';
import Database from 'better-sqlite3';
import { type ShardDoc } from '../../server/sync/documents.js';
import { runCliAsync } from '../helpers/cli.js';
import { startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';

/**
 * Issue 22, "chyme sync init|join|status|leave": the commands on databases nobody serves, then
 * `chyme serve` on both keeps them in sync. Real relay and CLI processes on 127.0.0.1.
 */

const iso = (ms: number) => new Date(ms).toISOString();
const STATUS_KEYS = ['object', 'enabled', 'encrypted', 'device_id', 'device_name', 'relay', 'connected', 'last_synced_at', 'pending_changes', 'webhook_host', 'is_webhook_host', 'peers', 'conflicts', 'integrity', 'last_error'];

async function exportedMeals(db: string): Promise<string[]> {
  const r = await runCliAsync(['export', '--format', 'json', '--db', db]);
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout).meals as Array<{ description: string }>).map((m) => m.description).sort();
}

describe('chyme sync init | join | status | leave', () => {
  let dir: string;
  let relay: RelayProcess;
  let a: Device;
  let b: Device;
  let busy: Device | undefined;
  let code: string;
  const now = Date.now();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-sync-cli-'));
    relay = await startRelay(join(dir, 'relay'));
    // Both databases have a life before sync: made through the API, then the services stop.
    [a, b] = await Promise.all([startDevice(dir, 'desk'), startDevice(dir, 'laptop')]);
    for (const [d, n] of [[a, 2], [b, 1]] as const) {
      for (let i = 0; i < n; i++) {
        const r = await d.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - (i + 1) * 3600_000), meal_type: 'snack', description: `${d.name} before sync ${i}`, macros: { calories: 100 } });
        assert.equal(r.status, 201);
      }
    }
    // And a year of the desk's past: more month shards than set-up sends at once (it sends a few
    // at a time, each group confirmed by the relay before the next).
    for (let m = 1; m <= 12; m++) {
      const r = await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - m * 31 * 86_400_000), meal_type: 'lunch', description: `desk month ${String(m).padStart(2, '0')}`, macros: { calories: 500 } });
      assert.equal(r.status, 201);
    }
    await Promise.all([a.stop(), b.stop()]);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop(), busy?.stop()]);
    await relay?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('init prints the pairing code alone on its last line', async () => {
    const r = await runCliAsync(['sync', 'init', '--relay', relay.url, '--token', relay.token, '--name', 'Desk', '--db', a.dbPath]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines.at(-1)!, /^chyme-sync:v2:[A-Z2-7]+$/);
    code = lines.at(-1)!;
    // Nothing on stderr but the trace a debugging run asked for (CHYME_SYNC_DEBUG).
    assert.equal(r.stderr.replace(/^sync \d\d:\d\d:\d\d\.\d{3}: .*\n/gm, ''), '');
  });

  test('join on B: A\'s meals arrive, B\'s own stay', async () => {
    const r = await runCliAsync(['sync', 'join', code, '--name', 'Laptop', '--db', b.dbPath]);
    assert.equal(r.status, 0, r.stderr);
    const months = Array.from({ length: 12 }, (_, m) => `desk month ${String(m + 1).padStart(2, '0')}`);
    assert.deepEqual(await exportedMeals(b.dbPath), ['desk before sync 0', 'desk before sync 1', ...months, 'laptop before sync 0']);
  });

  test('status --json has the sync resource\'s keys', async () => {
    const r = await runCliAsync(['sync', 'status', '--json', '--db', b.dbPath]);
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(s).sort(), [...STATUS_KEYS].sort());
    assert.equal(s.enabled, true);
    assert.equal(s.device_name, 'Laptop');
    assert.equal(s.relay, relay.url);
    assert.equal(s.connected, false, 'nothing serves B');
    assert.equal(s.is_webhook_host, false);
    assert.equal((s.webhook_host as { device_name: string }).device_name, 'Desk');
    assert.deepEqual((s.peers as Array<{ device_name: string }>).map((p) => p.device_name).sort(), ['Desk', 'Laptop']);
  });

  test('a wrong token: exit 6, one sentence, and sync stays off', async () => {
    const db = join(dir, 'wrong-token.db');
    const r = await runCliAsync(['sync', 'init', '--relay', relay.url, '--token', 'not-the-token-0123456789abcdef', '--db', db]);
    assert.equal(r.status, 6, r.stdout + r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^chyme: .*refused the token/);
    assert.equal(r.stdout, '');
    const s = await runCliAsync(['sync', 'status', '--json', '--db', db]);
    assert.equal(s.status, 0, s.stderr);
    assert.equal(JSON.parse(s.stdout).enabled, false);
  });

  test('a bad pairing code: exit 2 and no database made', async () => {
    const db = join(dir, 'never.db');
    const r = await runCliAsync(['sync', 'join', 'chyme-sync:v2:NOTACODE', '--db', db]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /^chyme: That is not a Chyme pairing code/);
    assert.equal(existsSync(db), false);
  });

  test('init while chyme serve runs on that database: exit 6 with a sentence', async () => {
    busy = await startDevice(dir, 'busy');
    const r = await runCliAsync(['sync', 'init', '--relay', relay.url, '--token', relay.token, '--db', busy.dbPath]);
    assert.equal(r.status, 6, r.stdout + r.stderr);
    assert.match(r.stderr, /^chyme: Chyme is running on .*busy\.db .*stop it and run this again\.\n$/);
    assert.equal((await busy.api('GET', '/v1/sync')).json.enabled, false);
    await busy.stop();
  });

  test('leave: exit 0 and the status says off', async () => {
    const db = join(dir, 'leaver.db');
    const j = await runCliAsync(['sync', 'join', code, '--name', 'Leaver', '--db', db]);
    assert.equal(j.status, 0, j.stderr);
    const r = await runCliAsync(['sync', 'leave', '--db', db]);
    assert.equal(r.status, 0, r.stderr);
    const s = await runCliAsync(['sync', 'status', '--db', db]);
    assert.equal(s.status, 0, s.stderr);
    assert.match(s.stdout, /^Sync is off\./);
    // The history no longer lists it as a peer.
    const sb = JSON.parse((await runCliAsync(['sync', 'status', '--json', '--db', b.dbPath])).stdout);
    assert.equal(sb.enabled, true);
  });

  test('then chyme serve on both keeps them in sync: B\'s old meal reaches A, new meals both ways', async () => {
    await Promise.all([a.restart(), b.restart()]);
    await until('B\'s meal from before joining on A', async () => {
      return (await exportedMeals(a.dbPath)).includes('laptop before sync 0');
    }, 30_000);
    const onA = await a.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 10 * 3600_000), meal_type: 'dinner', description: 'served on A', macros: { calories: 700 } });
    await until('A\'s new meal on B', async () => (await b.api('GET', `/v1/nutrition/meals/${onA.json.id}`)).status === 200, 30_000);
    const onB = await b.api('POST', '/v1/nutrition/meals', { timestamp: iso(now - 11 * 3600_000), meal_type: 'lunch', description: 'served on B', macros: { calories: 600 } });
    await until('B\'s new meal on A', async () => (await a.api('GET', `/v1/nutrition/meals/${onB.json.id}`)).status === 200, 30_000);
    const peers = (await a.api('GET', '/v1/sync')).json.peers as Array<{ device_name: string }>;
    assert.deepEqual(peers.map((p) => p.device_name).sort(), ['Desk', 'Laptop'], 'the device that left is no peer');
  });

  test('a device that joined while serving keeps whole copies of the documents it let go from memory', async () => {
    // Joining goes through every document and keeps only a few in memory; afterwards the device's
    // own copies (sync_docs in its database) must still hold every record.
    const attic = await startDevice(dir, 'attic');
    try {
      const joined = await attic.api('POST', '/v1/sync/join', { pairing_code: code, name: 'Attic' });
      assert.equal(joined.status, 200, JSON.stringify(joined.json));
    } finally {
      await attic.stop();
    }
    const db = new Database(attic.dbPath, { readonly: true });
    try {
      const docs = (db.prepare('SELECT name, bytes FROM sync_docs').all() as Array<{ name: string; bytes: Buffer }>).map((r) => ({ name: r.name, doc: Automerge.load<ShardDoc>(r.bytes) }));
      const shards = docs.filter((d) => d.name.startsWith('shard:meals/'));
      assert.ok(new Set(shards.map((d) => d.doc.device_id)).size > 1, 'the shards of several devices are stored');
      let stored = 0;
      for (const s of shards) stored += Object.keys(s.doc.records ?? {}).length;
      // Every meal the device holds in SQLite is in its stored documents (no deletions happened here).
      assert.equal(stored, (await exportedMeals(attic.dbPath)).length, 'every meal is in the stored copy');
    } finally {
      db.close();
    }
  });
});
