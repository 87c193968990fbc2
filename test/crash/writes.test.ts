/**
 * Crash proof for writes. A real `chyme serve` (the built CLI) takes concurrent writes — meals
 * created, edited and deleted with Idempotency-Key, sleep sessions, settings, JSON imports — and
 * is SIGKILLed at random moments (seeded), many times in a row, restarting on the same file. After
 * each restart:
 *
 * - `PRAGMA integrity_check` is ok;
 * - every write acknowledged with a 2xx is there, with exactly its effect;
 * - no unacknowledged write is half applied (a meal without its meal.created event, part of an import);
 * - retrying an unacknowledged write with its Idempotency-Key applies it exactly once;
 * - at the end, every event of those writes reached a real webhook receiver exactly once (deduplicated
 *   by webhook_delivery_id, as receivers are told to), and nothing else did.
 *
 * A second test kills the server during a backup and during a large import.
 * Needs the built server (`npm run build:server`; `npm test` builds first).
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseBackupName } from '../../server/backups/files.js';
import { inspectDatabaseFile } from '../../server/backups/inspect.js';
import { CLI, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { prng } from '../helpers/random.js';
import { startReceiver } from '../webhooks/helpers.js';

const SEED = Number(process.env.CHYME_CRASH_SEED ?? 20261123);
/**
 * Only bounds a test that hangs: on a machine with both cores busy these rounds were seen to take
 * more than 170 s (each round starts a process), which is load, not a fault.
 */
const CRASH_TEST_TIMEOUT_MS = 900_000;
const ROUNDS = 20;
/** Kills during an import and during a backup, each. */
const KILL_ROUNDS = 4;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Outcome = { kind: 'ack'; status: number; body: any } | { kind: 'refused'; status: number; body: any } | { kind: 'unknown' };

interface Op {
  label: string;
  method: string;
  path: string;
  body: unknown;
  key: string;
  outcome?: Outcome;
  /** What an acknowledged op must have done, checked against the database. */
  apply(ack: any): void;
}

async function call(url: string, apiKey: string, op: Op): Promise<Outcome> {
  try {
    const res = await fetch(url + op.path, {
      method: op.method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': op.key },
      body: JSON.stringify(op.body),
      // Generous: the machine running the tests may be loaded; a kill, not a timeout, is what ends a call.
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    const body = text ? JSON.parse(text) : undefined;
    return res.ok ? { kind: 'ack', status: res.status, body } : { kind: 'refused', status: res.status, body };
  } catch {
    // The connection died with the server: the client cannot know whether the write happened.
    return { kind: 'unknown' };
  }
}

function readOnly<T>(dbPath: string, fn: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

test('SIGKILL at random moments under concurrent writes: acknowledged writes survive, none is half applied or applied twice, events delivered once', { timeout: CRASH_TEST_TIMEOUT_MS }, async (t) => {
  assert.ok(existsSync(CLI), 'build/server/cli/main.js is missing: run `npm run build:server` first');
  const random = prng(SEED);
  const dir = mkdtempSync(join(tmpdir(), 'chyme-crash-writes-'));
  dirs.push(dir);
  const dbPath = join(dir, 'chyme.db');
  const apiKey = runCli(['keys', 'create', '--name', 'crash', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;

  // Receivers deduplicate by webhook_delivery_id (spec); we count what they saw per event id.
  const deliveriesByEvent = new Map<string, Set<string>>();
  let attempts = 0;
  const rx = await startReceiver((r) => {
    attempts++;
    const ev = r.json as { id: string; webhook_delivery_id: string };
    const ids = deliveriesByEvent.get(ev.id) ?? new Set<string>();
    ids.add(ev.webhook_delivery_id);
    deliveriesByEvent.set(ev.id, ids);
    return { status: 200 };
  });
  t.after(() => rx.close());

  // The model: what the acknowledged writes say the database holds.
  const meals = new Map<string, { description: string } | null>(); // null: deleted
  const importedIds: string[][] = [];
  let units: string | undefined;
  const sleepIds = new Set<string>();
  const ops: Op[] = [];
  let counter = 0;
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();

  let server: ServeProcess = await startServe(['--db', dbPath, '--tz', 'UTC']);
  const sub = await call(server.url, apiKey, {
    label: 'subscribe',
    method: 'POST',
    path: '/v1/webhooks',
    body: { url: rx.url, events: ['meal.created', 'meal.updated', 'meal.deleted', 'settings.updated'] },
    key: 'subscribe',
    apply() {},
  });
  assert.equal(sub.kind, 'ack');

  /** The next write of one actor; each actor owns its meals, so its writes are ordered. */
  function nextOp(actor: number, owned: string[]): Op {
    const n = ++counter;
    const key = `op-${n}`;
    const roll = random();
    if (actor === 0 && roll < 0.25) {
      const next = random() < 0.5 ? 'metric' : 'imperial';
      return { label: 'settings', method: 'PATCH', path: '/v1/settings', body: { units: next }, key, apply: () => void (units = next) };
    }
    if (actor === 1 && roll < 0.2) {
      const ids = [0, 1, 2].map((i) => `meal_imp${n}x${i}`);
      return {
        label: 'import',
        method: 'POST',
        path: '/v1/import',
        body: { format: 'chyme.export', format_version: 1, meals: ids.map((id, i) => ({ id, timestamp: iso(now - (n * 3 + i) * 60_000), meal_type: 'snack', macros: { calories: 50 + i } })) },
        key,
        apply: () => void importedIds.push(ids),
      };
    }
    if (roll < 0.35) {
      // Sleep sessions an hour long, two hours apart, far in the past: they never overlap.
      const start = now - 300 * 86_400_000 + n * 2 * 3600_000;
      return { label: 'sleep', method: 'POST', path: '/v1/sleep/sessions', body: { start: iso(start), end: iso(start + 3600_000) }, key, apply: (b) => void sleepIds.add(b.id) };
    }
    const live = owned.filter((id) => meals.get(id) !== null);
    if (live.length > 0 && roll < 0.55) {
      const id = live[Math.floor(random() * live.length)]!;
      const description = `a${actor} n${n} edited`;
      return { label: 'patch', method: 'PATCH', path: `/v1/nutrition/meals/${id}`, body: { description }, key, apply: () => void meals.set(id, { description }) };
    }
    if (live.length > 2 && roll < 0.7) {
      const id = live[Math.floor(random() * live.length)]!;
      return { label: 'delete', method: 'DELETE', path: `/v1/nutrition/meals/${id}`, body: {}, key, apply: () => void meals.set(id, null) };
    }
    const description = `a${actor} n${n}`;
    return {
      label: 'create',
      method: 'POST',
      path: '/v1/nutrition/meals',
      body: { timestamp: iso(now - Math.floor(random() * 20 * 86_400_000)), meal_type: 'lunch', description, macros: { calories: 100 + (n % 500) } },
      key,
      apply: (b) => {
        meals.set(b.id, { description });
        owned.push(b.id);
      },
    };
  }

  const owners: string[][] = [[], [], [], []];

  /** Runs each actor's writes one after another until the server dies. */
  async function writers(url: string, stopAt: { dead: boolean }): Promise<void> {
    await Promise.all(
      owners.map(async (owned, actor) => {
        while (!stopAt.dead) {
          const op = nextOp(actor, owned);
          ops.push(op);
          op.outcome = await call(url, apiKey, op);
          if (op.outcome.kind === 'ack') op.apply(op.outcome.body);
          else if (op.outcome.kind === 'refused') assert.fail(`${op.label} refused: ${JSON.stringify(op.outcome.body)}`);
          else return;
        }
      }),
    );
  }

  function checkDatabase(round: number, pending: Op[]): void {
    readOnly(dbPath, (db) => {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok', `round ${round}: integrity`);
      const unsettled = new Set(pending.map((op) => op.path.split('/').at(-1)));
      for (const [id, expected] of meals) {
        if (unsettled.has(id)) continue;
        const row = db.prepare('SELECT description FROM meals WHERE id = ?').get(id) as { description: string } | undefined;
        if (expected === null) assert.equal(row, undefined, `round ${round}: acknowledged delete of ${id} holds`);
        else assert.equal(row?.description, expected.description, `round ${round}: acknowledged state of ${id}`);
      }
      for (const ids of importedIds) {
        assert.equal(db.prepare(`SELECT count(*) FROM meals WHERE id IN (${ids.map(() => '?').join(',')})`).pluck().get(...ids), 3);
      }
      for (const id of sleepIds) assert.ok(db.prepare('SELECT 1 FROM sleep_sessions WHERE id = ?').get(id), `round ${round}: sleep ${id}`);
      if (units && !pending.some((op) => op.label === 'settings')) {
        assert.equal(db.prepare('SELECT units FROM settings').pluck().get(), units, `round ${round}: settings`);
      }
      // Nothing half applied: every meal a request created has its meal.created event (same
      // transaction), and every import is all or nothing.
      const orphans = db
        .prepare(
          `SELECT m.id FROM meals m WHERE m.id NOT LIKE 'meal_imp%' AND NOT EXISTS
             (SELECT 1 FROM events e WHERE e.type = 'meal.created' AND json_extract(e.data_json, '$.object.id') = m.id)`,
        )
        .pluck()
        .all();
      assert.deepEqual(orphans, [], `round ${round}: meals without their event`);
      const partial = db
        .prepare(`SELECT substr(id, 1, instr(id, 'x')) AS batch, count(*) AS n FROM meals WHERE id LIKE 'meal_imp%' GROUP BY batch HAVING n <> 3`)
        .all();
      assert.deepEqual(partial, [], `round ${round}: a partly applied import`);
    });
  }

  const started = Date.now();
  let killedWithInFlight = 0;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const stopAt = { dead: false };
      const running = writers(server.url, stopAt);
      await new Promise((r) => setTimeout(r, 20 + Math.floor(random() * 250)));
      await server.stop('SIGKILL');
      stopAt.dead = true;
      await running;
      const pending = ops.filter((op) => op.outcome?.kind === 'unknown');
      killedWithInFlight += pending.length;

      server = await startServe(['--db', dbPath, '--tz', 'UTC']);
      checkDatabase(round, pending);
      // Retried with the same key, each unacknowledged write is applied exactly once.
      for (const op of pending) {
        op.outcome = await call(server.url, apiKey, op);
        assert.equal(op.outcome.kind, 'ack', `round ${round}: retry of ${op.label} ${JSON.stringify(op.outcome)}`);
        op.apply((op.outcome as { body: unknown }).body);
        if (op.label === 'create') {
          const description = (op.body as { description: string }).description;
          const n = readOnly(dbPath, (db) => db.prepare('SELECT count(*) FROM meals WHERE description = ?').pluck().get(description));
          assert.equal(n, 1, `round ${round}: ${description} exists exactly once after its retry`);
        }
      }
      checkDatabase(round, []);
    }

    // Every event of the acknowledged writes reaches the receiver; each exactly once by delivery id.
    const expected = readOnly(dbPath, (db) =>
      db
        .prepare("SELECT id FROM events WHERE type IN ('meal.created', 'meal.updated', 'meal.deleted', 'settings.updated') ORDER BY seq")
        .pluck()
        .all() as string[],
    );
    await rx.waitUntil(() => expected.every((id) => deliveriesByEvent.has(id)), 30_000);
    for (const id of expected) assert.equal(deliveriesByEvent.get(id)!.size, 1, `event ${id}: one delivery id`);
    assert.deepEqual([...deliveriesByEvent.keys()].filter((id) => !expected.includes(id)), [], 'no event from a write that did not commit');

    const acked = ops.filter((op) => op.outcome?.kind === 'ack').length;
    t.diagnostic(
      `seed ${SEED}: ${ROUNDS} SIGKILLs in ${((Date.now() - started) / 1000).toFixed(1)} s; ${ops.length} writes (${killedWithInFlight} in flight at a kill, all retried once); ` +
        `${expected.length} events delivered, ${attempts} attempts received (${attempts - expected.length} repeats of a delivery id after a kill)`,
    );
    assert.equal(acked, ops.length);
    assert.ok(killedWithInFlight >= ROUNDS / 2, `kills landed mid-write (${killedWithInFlight})`);
  } finally {
    await server.stop('SIGKILL');
  }
});

test('SIGKILL during a backup and during a large import: no backup that looks whole but is not, imports all or nothing', { timeout: CRASH_TEST_TIMEOUT_MS }, async (t) => {
  const random = prng(SEED + 1);
  const dir = mkdtempSync(join(tmpdir(), 'chyme-crash-backup-'));
  dirs.push(dir);
  const dbPath = join(dir, 'chyme.db');
  const apiKey = runCli(['keys', 'create', '--name', 'crash', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
  const now = Date.now();
  const bigImport = (batch: number, count: number) => ({
    format: 'chyme.export',
    format_version: 1,
    meals: Array.from({ length: count }, (_, i) => ({
      id: `meal_b${batch}x${i}`,
      timestamp: new Date(now - (batch * count + i) * 120_000).toISOString(),
      meal_type: 'dinner',
      description: `batch ${batch} meal ${i} ${'x'.repeat(batch === 0 ? 1900 : 100)}`,
      macros: { calories: 300 + (i % 400) },
      foods: [{ name: 'rice', calories: 200 }, { name: 'beans', calories: 100 }],
    })),
  });

  let server = await startServe(['--db', dbPath, '--tz', 'UTC']);
  const post = (path: string, body: unknown, key: string) => call(server.url, apiKey, { label: path, method: 'POST', path, body, key, apply() {} });
  let killedMidImport = 0;
  let killedMidBackup = 0;
  try {
    // About a megabyte to copy, so a backup takes long enough to be killed in the middle.
    assert.equal((await post('/v1/import', bigImport(0, 400), 'seed')).kind, 'ack');

    for (let round = 1; round <= KILL_ROUNDS; round++) {
      // During an import: all of it or none of it, and the retry applies it once.
      const doc = bigImport(round, 120);
      const importing = post('/v1/import', doc, `import-${round}`);
      await new Promise((r) => setTimeout(r, 30 + Math.floor(random() * 200)));
      await server.stop('SIGKILL');
      const outcome = await importing;
      server = await startServe(['--db', dbPath, '--tz', 'UTC']);
      const present = readOnly(dbPath, (db) => db.prepare('SELECT count(*) FROM meals WHERE id LIKE ?').pluck().get(`meal_b${round}x%`) as number);
      if (outcome.kind === 'unknown') {
        killedMidImport++;
        assert.ok(present === 0 || present === 120, `round ${round}: import all or nothing (${present})`);
      } else {
        assert.equal(present, 120);
      }
      const retry = await post('/v1/import', doc, `import-${round}`);
      assert.equal(retry.kind, 'ack');
      assert.equal(readOnly(dbPath, (db) => db.prepare('SELECT count(*) FROM meals WHERE id LIKE ?').pluck().get(`meal_b${round}x%`)), 120);

      // During a backup: afterwards every file with a backup's name is a whole, checked database.
      const backingUp = post('/v1/backups', {}, `backup-${round}`);
      await new Promise((r) => setTimeout(r, Math.floor(random() * 60)));
      await server.stop('SIGKILL');
      if ((await backingUp).kind === 'unknown') killedMidBackup++;
      server = await startServe(['--db', dbPath, '--tz', 'UTC']);
      const folder = join(dir, 'backups');
      for (const name of existsSync(folder) ? readdirSync(folder) : []) {
        if (parseBackupName(name) === undefined) {
          assert.match(name, /^\.chyme-.*\.partial(-journal|-wal|-shm)?$/, 'anything else is an unfinished backup, named so');
          continue;
        }
        assert.equal(inspectDatabaseFile(join(folder, name)).integrity, 'ok', name);
      }
      assert.equal(readOnly(dbPath, (db) => db.pragma('integrity_check', { simple: true })), 'ok');
    }
    // The next backup clears what an interrupted one left behind.
    assert.equal((await post('/v1/backups', {}, 'final')).kind, 'ack');
    assert.deepEqual(readdirSync(join(dir, 'backups')).filter((n) => parseBackupName(n) === undefined), []);
    t.diagnostic(`killed mid-import ${killedMidImport} of ${KILL_ROUNDS} times, mid-backup ${killedMidBackup} of ${KILL_ROUNDS} times`);
    assert.ok(killedMidImport + killedMidBackup >= 2, 'the kills landed mid-operation');
  } finally {
    await server.stop('SIGKILL');
  }
});
