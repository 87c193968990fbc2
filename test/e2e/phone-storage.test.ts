/**
 * The phone's storage (issue 29), in Chromium with Pixel 7 emulation: the built phone page
 * (build/phone, `vite build --mode phone`) served by a static server with the phone's CSP starts
 * its worker, which opens SQLite-WASM on OPFS (SAH pool), runs every migration and answers `/v1`
 * with the service's own routes. A meal and a custom food found through food search (FTS5)
 * survive a reload; a second tab is told the app is open elsewhere and opens nothing. No CSP
 * violation anywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { migrations } from '../../server/db/migrations.js';
import { axe, formatViolations, launchBrowser } from './harness.js';
import { phoneApi, phoneSkip, serveStatic, storageState, waitReady, watch, type PhoneSite } from './phone-harness.js';

const MEAL = {
  timestamp: '2026-11-03T12:30:00+01:00',
  meal_type: 'lunch',
  description: 'Lentil soup on the phone',
  foods: [{ name: 'Lentils', calories: 300 }],
  macros: { calories: 420, protein_g: 21.5, fiber_g: 9 },
};
const FOOD = { name: 'Red lentil soup', brand: 'Home', nutrients: { calories: 90, protein_g: 6, carbs_g: 12, fat_g: 2 }, portions: [{ label: 'bowl', grams: 350 }] };

interface Named {
  id: string;
  name: string;
}

describe('the phone’s storage: SQLite-WASM on OPFS in a worker', { skip: phoneSkip }, () => {
  let browser: Browser;
  let context: BrowserContext;
  let site: PhoneSite;
  const problems: string[] = [];
  const wasmTypes: string[] = [];

  before(async () => {
    site = await serveStatic();
    browser = await launchBrowser();
    // One context is one origin's storage: OPFS and the locks survive a reload and are shared by its tabs.
    context = await browser.newContext({ ...devices['Pixel 7'], timezoneId: 'UTC', locale: 'en-GB' });
    context.on('response', (r) => {
      if (r.url().endsWith('.wasm')) wasmTypes.push(r.headers()['content-type'] ?? '');
    });
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => site?.server.close(r));
  });

  test('opens and migrates a new database, keeps a meal and the food index over a reload, and one tab holds it', async (t) => {
    const page = await context.newPage();
    watch(page, problems);
    await page.goto(`${site.app}phone.html`);
    const first = await waitReady(page);
    assert.equal(first.created, true, 'a new database');
    assert.equal(first.schemaVersion, Math.max(...migrations.map((m) => m.version)), 'every migration ran');
    assert.equal(page.workers().length, 1);

    const meal = await phoneApi<{ id: string; description: string; macros: Record<string, number> }>(page, 'POST', '/v1/nutrition/meals', MEAL);
    assert.equal(meal.status, 201, JSON.stringify(meal.body));
    const food = await phoneApi<Named>(page, 'POST', '/v1/foods', FOOD);
    assert.equal(food.status, 201, JSON.stringify(food.body));
    const search = async (query: string) => (await phoneApi<{ data: Named[] }>(page, 'GET', '/v1/foods', undefined, { query })).body.data.map((f) => f.id);
    assert.ok((await search('red lent')).includes(food.body.id), 'food search (FTS5) finds the food');

    await page.reload();
    const reopened = await waitReady(page);
    assert.equal(reopened.created, false, 'the same database, not a new one');
    assert.equal(reopened.schemaVersion, first.schemaVersion);
    const again = await phoneApi<typeof meal.body>(page, 'GET', `/v1/nutrition/meals/${meal.body.id}`);
    assert.deepEqual(again.body, meal.body, 'the meal survived the reload');
    assert.ok((await search('lentil soup')).includes(food.body.id), 'the food index survived the reload');
    // Figures for docs/phone.md ("Storage"); never asserted (the machine is shared).
    t.diagnostic(`created: wasm ${first.wasmMs.toFixed(0)} ms, vfs ${first.vfsMs.toFixed(0)} ms, open+migrate ${first.openMs.toFixed(0)} ms, serving ${first.coreMs.toFixed(0)} ms; reopened: wasm ${reopened.wasmMs.toFixed(0)} ms, vfs ${reopened.vfsMs.toFixed(0)} ms, open ${reopened.openMs.toFixed(0)} ms, serving ${reopened.coreMs.toFixed(0)} ms`);

    const second = await context.newPage();
    watch(second, problems);
    await second.goto(`${site.app}phone.html`);
    await second.getByRole('status').filter({ hasText: 'Chyme is open in another tab' }).waitFor();
    assert.equal((await storageState(second)).state, 'blocked');
    for (const colorScheme of ['light', 'dark'] as const) {
      await second.emulateMedia({ colorScheme });
      const violations = await axe(second);
      assert.deepEqual(violations, [], `axe, the blocked tab, ${colorScheme}: ${formatViolations(violations)}`);
    }
    assert.equal(second.workers().length, 0, 'the second tab started no worker, so opened no database');
    await assert.rejects(phoneApi(second, 'GET', `/v1/nutrition/meals/${meal.body.id}`), /not open here \(blocked\)/);
    // The first tab is untouched by it.
    assert.deepEqual((await phoneApi(page, 'GET', `/v1/nutrition/meals/${meal.body.id}`)).body, meal.body);

    // When the first tab goes, the waiting one takes the lock and opens the same database.
    await page.close();
    const takeover = await waitReady(second);
    assert.equal(takeover.created, false);
    assert.deepEqual((await phoneApi(second, 'GET', `/v1/nutrition/meals/${meal.body.id}`)).body, meal.body);
    await second.close();

    assert.ok(wasmTypes.length > 0 && wasmTypes.every((ct) => ct === 'application/wasm'), `sqlite3.wasm served as application/wasm: ${wasmTypes.join(', ')}`);
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });

  /** Crashes the page's renderer (its worker with it: no unload, no close), then opens the app again on the same database. */
  async function killAndReopen(page: Page): Promise<Page> {
    const crashed = page.waitForEvent('crash');
    const cdp = await context.newCDPSession(page);
    void cdp.send('Page.crash').catch(() => undefined);
    await crashed;
    await page.close();
    const next = await context.newPage();
    watch(next, problems);
    await next.goto(`${site.app}phone.html`);
    assert.equal((await waitReady(next)).created, false, 'the same database');
    return next;
  }

  test('a meal the worker answered is there after the tab is killed (its renderer crashed), and the log is replayed on the next open', async () => {
    const page = await context.newPage();
    watch(page, problems);
    await page.goto(`${site.app}phone.html`);
    await waitReady(page);
    const meal = await phoneApi<{ id: string }>(page, 'POST', '/v1/nutrition/meals', { ...MEAL, description: 'Eaten just before the tab was killed' });
    assert.equal(meal.status, 201, JSON.stringify(meal.body));
    // The page's renderer process (its database worker with it) ends at once: no unload, no close of
    // the database, so no checkpoint; what the worker had committed is in the write-ahead log only.
    const next = await killAndReopen(page);
    const again = await phoneApi(next, 'GET', `/v1/nutrition/meals/${meal.body.id}`);
    assert.deepEqual(again.body, meal.body, 'the committed meal survived the kill');
    await next.close();
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });

  test('meals logged across a checkpoint and the log written again from its start are all there after a kill', async () => {
    const page = await context.newPage();
    watch(page, problems);
    await page.goto(`${site.app}phone.html`);
    await waitReady(page);
    // A meal's commit writes 12–15 pages to the log (its row and three indexes, the event, the
    // idempotency key): 150 of them pass SQLite's checkpoint at 1,000 pages, after which the log is
    // written again from its start over older frames. The worker gathers each file's writes until
    // SQLite syncs it (renderer/src/phone/coalesced-writes.ts); what a commit synced must be on
    // storage whatever was still gathered when the tab died.
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      const r = await phoneApi<{ id: string }>(page, 'POST', '/v1/nutrition/meals', { ...MEAL, description: `Checkpointed meal ${i}` });
      assert.equal(r.status, 201, `meal ${i}: ${JSON.stringify(r.body)}`);
      ids.push(r.body.id);
    }
    const next = await killAndReopen(page);
    const missing: string[] = [];
    for (const id of ids) if ((await phoneApi(next, 'GET', `/v1/nutrition/meals/${id}`)).status !== 200) missing.push(id);
    assert.deepEqual(missing, [], `all ${ids.length} meals survived the kill`);
    await next.close();
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
