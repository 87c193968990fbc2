/**
 * An import's write runs in its worker, on a connection of its own, while the service's own
 * writers wait at the write gate (server/write-gate.ts) instead of in SQLite's busy handler, which
 * would stop the thread and every read with it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ManualClock } from '../../server/clock.js';
import { STORAGE_BUSY_LIMIT_MS, StorageBusyError, WriteGate } from '../../server/write-gate.js';
import { startTestService, type TestService } from '../helpers/service.js';

async function upload(t: TestService, name: string, data: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([data]), name);
  const res = await fetch(`${t.baseUrl}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${t.adminKey}` }, body: form });
  return { status: res.status, body: await res.json() };
}

/** A Chyme export of `n` meals, one every 3 hours back from 2026-11-01. */
function exportOf(n: number): string {
  const end = Date.UTC(2026, 10, 1);
  const meals = Array.from({ length: n }, (_, i) => ({
    id: `meal_bulk${i}`,
    timestamp: new Date(end - i * 3 * 3600_000).toISOString(),
    meal_type: 'snack',
    description: `Bulk meal ${i}`,
    macros: { calories: 200 + (i % 300), protein_g: 10, carbs_g: 20, fat_g: 5, fiber_g: 2 },
    micros: { sodium_mg: 100, caffeine_mg: null },
    foods: [],
    source: 'cronometer',
  }));
  return JSON.stringify({ object: 'export', format: 'chyme.export', format_version: 1, meals, sleep_sessions: [], webhook_subscriptions: [] });
}

const meal = (timestamp: string) => ({ timestamp, meal_type: 'lunch', description: 'Soup', macros: { calories: 350 } });

/**
 * Starts an import and, once its worker has taken the write gate for its first transaction, asks
 * for `readPath`, which must be answered before the import is, and sends a meal, which must be
 * written too. Returns the import's answer.
 */
async function importWhileInUse<R>(t: TestService, start: () => Promise<R>, readPath: string): Promise<R> {
  const writes = t.service.app.writes;
  const acquireBulk = writes.acquireBulk.bind(writes);
  let taken!: () => void;
  const writing = new Promise<void>((resolve) => (taken = resolve));
  writes.acquireBulk = async () => {
    const turns = await acquireBulk();
    return {
      ...turns,
      take: async () => {
        await turns.take();
        taken();
      },
    };
  };
  try {
    let answered = false;
    const imported = start().finally(() => (answered = true));
    await writing;
    // The worker now writes its records, in short transactions, on its own connection.
    const read = await t.request('GET', readPath);
    assert.equal(read.status, 200);
    assert.equal(answered, false, 'a read was answered while the import was being written');
    const posted = t.request('POST', '/v1/nutrition/meals', { body: meal('2026-11-22T18:00:00Z') });
    const result = await imported;
    assert.equal((await posted).status, 201);
    assert.equal(writes.closed, false);
    return result;
  } finally {
    writes.acquireBulk = acquireBulk;
  }
}

test('the write gate: holders take turns, open() waits for every holder, release is once', async () => {
  const gate = new WriteGate();
  assert.equal(gate.closed, false);
  const order: string[] = [];
  const releaseA = await gate.acquire();
  assert.equal(gate.closed, true);
  const b = gate.acquire().then((release) => {
    order.push('b acquired');
    return release;
  });
  const opened = gate.open().then(() => order.push('opened'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'nobody gets past a held gate');
  releaseA();
  releaseA(); // a second call does nothing
  const releaseB = await b;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['b acquired'], 'the waiting holder takes the gate before open() resolves');
  assert.equal(gate.closed, true);
  releaseB();
  await opened;
  assert.deepEqual(order, ['b acquired', 'opened']);
  assert.equal(gate.closed, false);
});

test('the write gate: a bulk holder closes it for each of its transactions only; writers go between them, other holders after its end', async () => {
  const gate = new WriteGate();
  const order: string[] = [];
  const turns = await gate.acquireBulk();
  assert.equal(gate.closed, false);
  await turns.take();
  assert.equal(gate.closed, true);
  void gate.writable().then(() => order.push('writer'));
  const holder = gate.acquire().then((release) => {
    order.push('holder');
    return release;
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'nobody gets past a closed gate');
  turns.give();
  await turns.take();
  assert.deepEqual(order, ['writer'], 'the waiting writer wrote before the next transaction');
  assert.equal(gate.closed, true);
  turns.give();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['writer'], 'no other holder before the bulk holder ends');
  turns.end();
  turns.end(); // a second call does nothing
  (await holder)();
  assert.deepEqual(order, ['writer', 'holder']);
  await turns.take(); // after its end, a bulk holder closes nothing
  assert.equal(gate.closed, false);
});

test('writable(): waits on the event loop while another connection holds the lock, and gives up after the limit by the clock', async () => {
  let held = true;
  const clock = new ManualClock(0);
  const gate = new WriteGate({ lockHeldElsewhere: () => held, clock });
  assert.equal(gate.closed, false);
  assert.equal(gate.blocked, true);
  let settled = false;
  const waiting = gate.writable().then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(settled, false, 'a held lock is waited for');
  held = false;
  await waiting;
  assert.equal(gate.blocked, false);

  held = true;
  const giving = gate.writable();
  await new Promise((r) => setTimeout(r, 30));
  clock.advance(STORAGE_BUSY_LIMIT_MS);
  await assert.rejects(giving, (err: unknown) => err instanceof StorageBusyError && err.code === 'SQLITE_BUSY');
  // Background writers wait however long it lasts.
  let done = false;
  const background = gate.writable({ limitMs: Infinity }).then(() => (done = true));
  clock.advance(60_000);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(done, false);
  held = false;
  const keepAlive = setTimeout(() => {}, 10_000); // the background wait's own timers are unreferenced
  await background;
  clearTimeout(keepAlive);
});

describe('writes while another connection holds the write lock', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  test('a POST waits at the closed gate and is written once it opens; reads are answered meanwhile', async () => {
    const release = await t.service.app.writes.acquire();
    // What an import's worker does: hold SQLite's write lock from another connection.
    const other = new Database(t.dbPath);
    other.pragma('busy_timeout = 5000');
    other.prepare('BEGIN IMMEDIATE').run();
    let posted: Promise<{ status: number }> | undefined;
    try {
      posted = t.request('POST', '/v1/nutrition/meals', { body: meal('2026-11-22T11:00:00Z') });
      // Without the gate the POST would wait in SQLite's busy handler, holding this very thread
      // (the service runs in the test's process), and these reads could not be answered.
      const list = await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-23');
      assert.equal(list.status, 200);
      assert.equal(list.body.data.length, 0);
      const state = await t.request('GET', '/v1/digestion/state');
      assert.equal(state.status, 200);
      let answered = false;
      void posted.then(() => (answered = true));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(answered, false, 'the POST waits while the gate is closed');
    } finally {
      other.prepare('COMMIT').run();
      other.close();
      release();
    }
    const created = await posted;
    assert.equal(created.status, 201);
    assert.equal((await t.request('GET', '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-23')).body.data.length, 1);
  });

  test('an import is written by its worker while reads are answered; a POST sent meanwhile lands', async () => {
    const r = await importWhileInUse(t, () => upload(t, 'export.json', exportOf(20_000)), '/v1/nutrition/meals?start_date=2026-10-01&end_date=2026-10-02');
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.meals_added, 20_000);
    const count = (t.service.app.db.prepare('SELECT COUNT(*) AS n FROM meals').get() as { n: number }).n;
    assert.equal(count, 20_000 + 2);
    // The derived data follows the worker's commit: today's score counts the meal of the 22nd.
    const scores = await t.request('GET', '/v1/digestion/scores/daily?start_date=2026-10-31&end_date=2026-11-01');
    assert.equal(scores.status, 200);
    assert.ok(scores.body.data.some((d: { score: number | null }) => d.score !== null), JSON.stringify(scores.body));
  });
});

describe('POST /v1/import (a Chyme export as the body)', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const post = async (body: string | Uint8Array, type = 'application/json') => {
    const res = await fetch(`${t.baseUrl}/v1/import`, { method: 'POST', headers: { authorization: `Bearer ${t.adminKey}`, 'content-type': type }, body });
    return { status: res.status, body: (await res.json()) as any };
  };

  test('bad bodies get the usual answers, and nothing is written', async () => {
    const malformed = await post('{"format": "chyme.export",');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'invalid_json');
    const notJson = await post('format=chyme', 'text/plain');
    assert.equal(notJson.status, 415);
    const tooLarge = await post(new Uint8Array(64 * 1024 * 1024 + 1).fill(32));
    assert.equal(tooLarge.status, 413);
    const badMeal = await post(JSON.stringify({ format: 'chyme.export', format_version: 1, meals: [{ id: 'meal_x', timestamp: '2026-11-20T08:00:00Z', meal_type: 'elevenses', macros: { calories: 1 } }] }));
    assert.equal(badMeal.status, 400);
    assert.equal(badMeal.body.error.code, 'parameter_invalid');
    assert.equal(badMeal.body.error.param, 'meals.0.meal_type');
    const missing = await post(JSON.stringify({ format_version: 1 }));
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'parameter_missing');
    assert.equal(missing.body.error.param, 'format');
    const count = (t.service.app.db.prepare('SELECT COUNT(*) AS n FROM meals').get() as { n: number }).n;
    assert.equal(count, 0);
  });

  test('the document is read and written by a worker while reads are answered; a POST sent meanwhile lands after it', async () => {
    const r = await importWhileInUse(t, () => post(exportOf(20_000)), '/v1/digestion/state');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.object, 'import_result');
    assert.deepEqual(r.body.meals, { imported: 20_000, skipped: 0 });
    const again = await post(exportOf(20_000));
    assert.deepEqual(again.body.meals, { imported: 0, skipped: 20_000 });
    const count = (t.service.app.db.prepare('SELECT COUNT(*) AS n FROM meals').get() as { n: number }).n;
    assert.equal(count, 20_001);
  });
});
