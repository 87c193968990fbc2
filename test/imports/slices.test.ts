/**
 * Issue 27, item 6: no request waits long behind an import. The import's worker writes a two-year
 * history in short transactions, and the service's own writes go between them; an import that
 * fails, or that a crash cuts off, still leaves nothing (server/imports/imports.ts, importSteps).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { historyImportDocument } from '../../bench/seed.js';
import { startServe, runCli } from '../helpers/cli.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** Two years up to 2026-11-20, as the sync bulk test imports them: ~2,900 meals and 730 nights. */
const TWO_YEARS = JSON.stringify(historyImportDocument({ lastDay: '2026-11-20', days: 730, timezone: 'UTC' }));
const IMPORTED_MEALS = (JSON.parse(TWO_YEARS) as { meals: unknown[] }).meals.length;

/**
 * A bound on hangs, not the 200 ms target (bench/imports.ts measures that): a request waits for at
 * most two of the import's ~25 ms transactions, which a loaded two-core machine stretches to a few
 * hundred ms; the one transaction of before (about a second idle) stretched to 1–3 s and more.
 */
const REQUEST_BOUND_MS = 2000;

async function upload(url: string, key: string, data: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([data]), 'two-years.json');
  return fetch(`${url}/v1/imports`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}

describe('a two-year import beside live requests', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService({ timezone: 'UTC' });
  });
  after(async () => {
    await t?.stop();
  });

  test('meals logged while the import is written are committed between its transactions, and no request hangs', async () => {
    const writes = t.service.app.writes;
    // When the worker's write begins and how many transactions it takes the gate for.
    let writing = false;
    let transactions = 0;
    const acquireBulk = writes.acquireBulk.bind(writes);
    writes.acquireBulk = async () => {
      const turns = await acquireBulk();
      writing = true;
      phases.push(`writing from ${Math.round(performance.now() - began)} ms`);
      return {
        ...turns,
        take: async () => {
          await turns.take();
          transactions++;
        },
      };
    };

    const durations: number[] = [];
    const began = performance.now();
    let slowest = '';
    const phases: string[] = [];
    let overlapping = 0;
    let importing = true;
    const timed = async (method: string, path: string, body?: unknown) => {
      const during = writing;
      const t0 = performance.now();
      const r = await t.request(method, path, body === undefined ? {} : { body });
      const ms = performance.now() - t0;
      if (ms > Math.max(0, ...durations)) slowest = `${method} ${path.slice(0, 20)} from ${Math.round(t0 - began)} ms, ${Math.round(ms)} ms`;
      durations.push(ms);
      if (during && importing) overlapping++;
      return r;
    };
    // The first requests load the routes' modules: not what is measured here.
    assert.equal((await t.request('POST', '/v1/nutrition/meals', { body: { timestamp: '2026-11-22T09:00:00Z', meal_type: 'snack', description: 'warm-up', macros: { calories: 1 } } })).status, 201);
    let n = 0;
    const live: string[] = [];
    const stream = (async () => {
      while (importing) {
        const posted = await timed('POST', '/v1/nutrition/meals', { timestamp: '2026-11-22T10:00:00Z', meal_type: 'snack', description: `live ${++n}`, macros: { calories: 100 } });
        assert.equal(posted.status, 201, posted.text);
        if (writing && importing) live.push(posted.body.id as string);
        assert.equal((await timed('GET', '/v1/nutrition/meals?start_date=2026-11-22&end_date=2026-11-22')).status, 200);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    const imported = await upload(t.baseUrl, t.adminKey, TWO_YEARS);
    importing = false;
    phases.push(`answered at ${Math.round(performance.now() - began)} ms`);
    await stream;
    const text = await imported.text();
    assert.equal(imported.status, 201, text);
    const result = JSON.parse(text) as { meals_added: number; sleep_added: number };
    assert.equal(result.meals_added, IMPORTED_MEALS);
    assert.equal(result.sleep_added, 730);

    // By order of commits: a live meal whose row lies between the import's first and last rows
    // was committed while the import was being written. One transaction allows none.
    const db = new Database(t.dbPath, { readonly: true });
    try {
      const range = db.prepare("SELECT MIN(rowid) AS first, MAX(rowid) AS last FROM meals WHERE description NOT LIKE 'live %' AND description <> 'warm-up'").get() as { first: number; last: number };
      const between = live.filter((id) => {
        const { rowid } = db.prepare('SELECT rowid FROM meals WHERE id = ?').get(id) as { rowid: number };
        return rowid > range.first && rowid < range.last;
      }).length;
      const figures = `${transactions} import transactions, ${overlapping} requests during them, ${between} of ${live.length} live meals committed between two, longest request ${slowest}; ${phases.join(', ')}`;
      process.stdout.write(`# ${figures}\n`);
      assert.ok(transactions > 1, `the import was written in one transaction (${figures})`);
      assert.ok(overlapping >= 4, `too few requests overlapped the import to tell (${figures})`);
      assert.ok(between >= 1, `no meal was written between the import's transactions (${figures})`);
      assert.equal((db.prepare('SELECT COUNT(*) AS n FROM import_writes').get() as { n: number }).n, 0, 'a finished import leaves nothing to remove');
      assert.ok(Math.max(...durations) < REQUEST_BOUND_MS, `a request waited ${Math.round(Math.max(...durations))} ms (${figures})`);
    } finally {
      db.close();
    }
  });
});

describe('an import cut off by a crash', () => {
  test('the service killed midway through the write starts again without any of it; the same file then imports whole', async () => {
    const dir = (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/chyme-import-crash-`);
    const dbPath = `${dir}/chyme.db`;
    try {
      let serve = await startServe(['--db', dbPath, '--tz', 'UTC']);
      const key = runCli(['keys', 'create', '--name', 'crash', '--scopes', 'all', '--db', dbPath]).stdout.trim().split('\n').at(-1)!;
      const before = await fetch(`${serve.url}/v1/nutrition/meals`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ timestamp: '2026-11-22T10:00:00Z', meal_type: 'lunch', description: 'kept', macros: { calories: 500 } }) });
      assert.equal(before.status, 201);

      const upload1 = upload(serve.url, key, TWO_YEARS).catch(() => undefined);
      // Killed once some of the import's transactions have committed (read from another connection).
      const reader = new Database(dbPath, { readonly: true, fileMustExist: true });
      let written = 0;
      try {
        const t0 = Date.now();
        while (written === 0) {
          assert.ok(Date.now() - t0 < 60_000, 'the import wrote nothing within 60 s');
          written = (reader.prepare("SELECT COUNT(*) AS n FROM import_writes WHERE entity = 'meal'").get() as { n: number }).n;
          if (written === 0) await new Promise((r) => setTimeout(r, 2));
        }
      } finally {
        reader.close();
      }
      serve.child.kill('SIGKILL');
      await new Promise((r) => serve.child.once('exit', r));
      await upload1;

      const cut = new Database(dbPath, { readonly: true });
      const partial = (cut.prepare("SELECT COUNT(*) AS n FROM meals WHERE description <> 'kept'").get() as { n: number }).n;
      cut.close();
      assert.ok(partial > 0 && partial < IMPORTED_MEALS, `the kill did not come midway (${partial} of ${IMPORTED_MEALS} meals on disk)`);

      serve = await startServe(['--db', dbPath, '--tz', 'UTC']);
      try {
        const imports = (await fetch(`${serve.url}/v1/imports`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json())) as { data: unknown[] };
        assert.equal(imports.data.length, 0);
        const left = new Database(dbPath, { readonly: true });
        try {
          const count = (table: string) => (left.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
          assert.deepEqual(
            { meals: count('meals'), sleep: count('sleep_sessions'), imports: count('imports'), import_records: count('import_records'), import_writes: count('import_writes') },
            { meals: 1, sleep: 0, imports: 0, import_records: 0, import_writes: 0 },
            `${partial} meals of the cut-off import were on disk; after the restart none may be left`,
          );
        } finally {
          left.close();
        }

        const again = await upload(serve.url, key, TWO_YEARS);
        assert.equal(again.status, 201);
        const result = (await again.json()) as { meals_added: number; sleep_added: number; duplicates_skipped: number };
        assert.deepEqual([result.meals_added, result.sleep_added, result.duplicates_skipped], [IMPORTED_MEALS, 730, 0]);
      } finally {
        await serve.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
