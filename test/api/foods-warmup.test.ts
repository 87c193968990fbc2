import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { warmUpFoods } from '../../server/foods/foods.js';
import { loadedTableState } from '../../server/foods/table.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The warm-up (loading the food table, building the search index) runs in slices; these tests
 * make every slice one step (sliceMs 0) and act in the turns between them, so what they check
 * depends on the order of events, never on how fast the machine is.
 */
const MEALS = '/v1/nutrition/meals?start_date=2026-11-01&end_date=2026-11-30&limit=1';

describe('foods warm-up: requests are answered between its slices', () => {
  let t: TestService;
  before(async () => {
    t = await startTestService();
  });
  after(() => t.stop());

  const tableLoaded = () => loadedTableState(t.service.app.db) !== undefined;
  const names = (r: { body: { data: Array<{ name: string }> } }) => r.body.data.map((f) => f.name);

  test('a request made during the load is answered before the load ends; a search meanwhile finishes it and is right', async () => {
    let turns = 0;
    let ended = false;
    const answered: Array<{ turn: number; path: string; status: number; tableLoaded: boolean; warmUpEnded: boolean }> = [];
    const ask = async (path: string) => {
      const r = await t.request('GET', path);
      answered.push({ turn: turns, path, status: r.status, tableLoaded: tableLoaded(), warmUpEnded: ended });
      return r;
    };
    let search: Awaited<ReturnType<typeof ask>> | undefined;
    const warmUp = warmUpFoods(t.service.app, {
      sliceMs: 0,
      nextTurn: async () => {
        turns++;
        // The third turn falls while the table's rows are being staged (the first is after parsing).
        if (turns === 3) await ask(MEALS);
        if (turns === 5) search = await ask('/v1/foods?query=banana&limit=3');
      },
    }).then(() => (ended = true));
    await warmUp;
    assert.equal(answered[0]?.path, MEALS, 'the warm-up let a request in');
    assert.deepEqual(
      { status: answered[0]!.status, tableLoaded: answered[0]!.tableLoaded, warmUpEnded: answered[0]!.warmUpEnded },
      { status: 200, tableLoaded: false, warmUpEnded: false },
      'answered while the table was still being loaded',
    );
    assert.equal(answered[1]?.status, 200);
    assert.equal(answered[1]!.warmUpEnded, false);
    assert.equal(answered[1]!.tableLoaded, true, 'the search finished the load itself');
    assert.equal(names(search!)[0], 'Bananas, raw');
    assert.ok(loadedTableState(t.service.app.db)!.count > 9000);
    assert.equal(turns, 5, 'the search also built the index: the warm-up had nothing left to do');
  });

  test('a search during the index build is right, and the warm-up keeps what it built', async () => {
    // The table is loaded (previous test); a custom food makes the index stale, so it is rebuilt.
    const created = await t.request('POST', '/v1/foods', { body: { name: 'Quincewarm jam', nutrients: { calories: 250 } } });
    assert.equal(created.status, 201);
    let turns = 0;
    let during: string[] = [];
    await warmUpFoods(t.service.app, {
      sliceMs: 0,
      nextTurn: async () => {
        turns++;
        if (turns === 10) during = names(await t.request('GET', '/v1/foods?query=quincewarm'));
      },
    });
    assert.ok(turns >= 10, `the index is built in slices (${turns} turns)`);
    assert.deepEqual(during, ['Quincewarm jam']);
    assert.deepEqual(names(await t.request('GET', '/v1/foods?query=quincew')), ['Quincewarm jam']);
  });

  test('the warm-up waits while an import holds the write gate, and goes on once it opens', async () => {
    const s = await startTestService();
    try {
      const release = await s.service.app.writes.acquire();
      let ended = false;
      const warmUp = warmUpFoods(s.service.app, { sliceMs: 0 }).then(() => (ended = true));
      // Unheld, the warm-up ends in a few hundred turns of one step each.
      for (let i = 0; i < 3000; i++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(ended, false);
      assert.equal(loadedTableState(s.service.app.db), undefined);
      release();
      await warmUp;
      assert.ok(loadedTableState(s.service.app.db)!.count > 9000);
    } finally {
      await s.stop();
    }
  });

  test('a restore during the warm-up: it starts over on the restored database, and its foods are right', async () => {
    const s = await startTestService({ backups: { automatic: false } });
    try {
      // Taken before any foods request: the backup holds no food table.
      const backup = await s.request('POST', '/v1/backups');
      assert.equal(backup.status, 201, backup.text);
      const before = s.service.app.db;
      let turns = 0;
      let restored = 0;
      await warmUpFoods(s.service.app, {
        sliceMs: 0,
        nextTurn: async () => {
          // While the table's rows are being staged into the database the restore replaces.
          if (++turns === 3) restored = (await s.request('POST', `/v1/backups/${backup.body.id}/restore`)).status;
        },
      });
      assert.equal(restored, 200);
      assert.notEqual(s.service.app.db, before, 'the restore replaced the database');
      assert.ok(loadedTableState(s.service.app.db)!.count > 9000, 'the warm-up loaded the table into the restored database');
      assert.equal(names(await s.request('GET', '/v1/foods?query=banana&limit=1'))[0], 'Bananas, raw');
    } finally {
      await s.stop();
    }
  });

  test('a warm-up that is stopped ends between slices and leaves the load to the next foods request', async () => {
    const s = await startTestService();
    try {
      const stop = new AbortController();
      let turns = 0;
      await warmUpFoods(s.service.app, {
        sliceMs: 0,
        signal: stop.signal,
        nextTurn: async () => {
          if (++turns === 4) stop.abort();
        },
      });
      assert.equal(turns, 4);
      assert.equal(loadedTableState(s.service.app.db), undefined, 'nothing recorded as loaded');
      const r = await s.request('GET', '/v1/foods?query=banana&limit=1');
      assert.equal(names(r)[0], 'Bananas, raw');
      assert.ok(loadedTableState(s.service.app.db)!.count > 9000);
    } finally {
      await s.stop();
    }
  });
});
