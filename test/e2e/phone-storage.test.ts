/**
 * The phone's storage (issue 29's spike), in Chromium with Pixel 7 emulation: the built phone page
 * (build/phone, `vite build --mode phone`) served by a static server with the phone's CSP starts
 * its worker, which opens SQLite-WASM on OPFS (SAH pool) and runs every migration. A meal written
 * through server/db/meals.ts and a food found through FTS5 survive a reload; a second tab is told
 * the app is open elsewhere and opens nothing. No CSP violation anywhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { FoodRecord, NewFood } from '../../server/db/foods.js';
import type { MealRecord } from '../../server/db/meals.js';
import { migrations } from '../../server/db/migrations.js';
import { PHONE_CONTENT_SECURITY_POLICY } from '../../server/content-security.js';
import type { StorageReady } from '../../renderer/src/phone/protocol.js';
import { axe, CHROMIUM, formatViolations, launchBrowser, ROOT } from './harness.js';

const PHONE = join(ROOT, 'build/phone');
const skip = !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)` : !existsSync(join(PHONE, 'phone.html')) ? 'build/phone is missing: run `npm run build:renderer` first' : false;

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.css': 'text/css; charset=utf-8' };

/** The phone's files with the headers the relay will serve them with (PHONE-PEER.md §E2). */
function serveStatic(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(PHONE, path === '/' ? 'phone.html' : path);
    if (!file.startsWith(PHONE) || !existsSync(file) || !TYPES[extname(file)]) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[extname(file)]!,
      'Content-Security-Policy': PHONE_CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

interface StorageGlobal {
  chymeStorage: {
    state: string;
    ready: StorageReady | null;
    call(op: string, arg: unknown): Promise<unknown>;
  };
}

/** The page's storage state and, once open, the worker's report. */
const storageState = (page: Page) => page.evaluate(() => {
  const s = (globalThis as unknown as StorageGlobal).chymeStorage;
  return { state: s.state, ready: s.ready };
});

async function waitReady(page: Page): Promise<StorageReady> {
  await page.waitForFunction(() => ['ready', 'failed'].includes((globalThis as unknown as StorageGlobal).chymeStorage?.state), undefined, { timeout: 30_000 });
  const { state, ready } = await storageState(page);
  assert.equal(state, 'ready', `the database opened: ${await page.locator('#status').innerText()}`);
  return ready!;
}

const call = <T>(page: Page, op: string, arg: unknown) =>
  page.evaluate(([o, a]) => (globalThis as unknown as StorageGlobal).chymeStorage.call(o as string, a), [op, arg] as const) as Promise<T>;

function meal(): MealRecord {
  const ts = Date.parse('2026-11-03T12:30:00Z');
  return {
    id: 'meal_phone_1', timestampMs: ts, utcOffsetMin: 60, day: '2026-11-03', mealType: 'lunch', description: 'Lentil soup on the phone', calories: 420, caloriesSource: 'logged',
    proteinG: 21.5, carbsG: null, fatG: null, fiberG: 9, sodiumMg: null, caffeineMg: null, foods: [{ name: 'Lentils', calories: 300 }], source: 'manual', inferredTime: false, mealTypeInferred: false, nutrientSources: { protein_g: 'logged' }, createdMs: ts, updatedMs: ts,
  };
}

const FOOD: NewFood = {
  id: 'food_phone_1', source: 'custom', name: 'Red lentil soup', brand: 'Home',
  nutrients: { calories: 90, protein_g: 6, carbs_g: 12, fat_g: 2, fiber_g: 3, sugars_g: 1, sodium_mg: 300, caffeine_mg: null },
  portions: [{ label: 'bowl', grams: 350 }], sr28Mask: null, createdMs: 1, updatedMs: 1,
};

describe('the phone’s storage: SQLite-WASM on OPFS in a worker', { skip }, () => {
  let browser: Browser;
  let context: BrowserContext;
  let site: { server: Server; url: string };
  const problems: string[] = [];
  const wasmTypes: string[] = [];

  const watch = (page: Page) => {
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));
  };

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
    watch(page);
    await page.goto(`${site.url}/phone.html`);
    const first = await waitReady(page);
    assert.equal(first.created, true, 'a new database');
    assert.equal(first.schemaVersion, Math.max(...migrations.map((m) => m.version)), 'every migration ran');
    assert.equal(page.workers().length, 1);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      const violations = await axe(page);
      assert.deepEqual(violations, [], `axe, ${colorScheme}: ${formatViolations(violations)}`);
    }

    await call(page, 'insertMeal', meal());
    const food = await call<FoodRecord>(page, 'insertFood', FOOD);
    assert.deepEqual(await call(page, 'matchFoods', 'lent*'), [food.seq], 'FTS5 finds the food');
    assert.deepEqual(await call(page, 'matchFoods', 'bread'), []);

    await page.reload();
    const reopened = await waitReady(page);
    assert.equal(reopened.created, false, 'the same database, not a new one');
    assert.equal(reopened.schemaVersion, first.schemaVersion);
    assert.deepEqual(await call(page, 'getMeal', 'meal_phone_1'), meal(), 'the meal survived the reload');
    assert.deepEqual(await call(page, 'matchFoods', 'soup'), [food.seq], 'the FTS index survived the reload');
    // Figures for docs/phone.md ("Storage"); never asserted (the machine is shared).
    t.diagnostic(`created: wasm ${first.wasmMs.toFixed(0)} ms, vfs ${first.vfsMs.toFixed(0)} ms, open+migrate ${first.openMs.toFixed(0)} ms; reopened: wasm ${reopened.wasmMs.toFixed(0)} ms, vfs ${reopened.vfsMs.toFixed(0)} ms, open ${reopened.openMs.toFixed(0)} ms`);

    const second = await context.newPage();
    watch(second);
    await second.goto(`${site.url}/phone.html`);
    await second.getByRole('status').filter({ hasText: 'Chyme is open in another tab' }).waitFor();
    assert.equal((await storageState(second)).state, 'blocked');
    assert.deepEqual(await axe(second), [], 'axe, the blocked tab');
    assert.equal(second.workers().length, 0, 'the second tab started no worker, so opened no database');
    await assert.rejects(call(second, 'getMeal', 'meal_phone_1'), /not open here \(blocked\)/);
    // The first tab is untouched by it.
    assert.deepEqual(await call(page, 'getMeal', 'meal_phone_1'), meal());

    // When the first tab goes, the waiting one takes the lock and opens the same database.
    await page.close();
    const takeover = await waitReady(second);
    assert.equal(takeover.created, false);
    assert.deepEqual(await call(second, 'getMeal', 'meal_phone_1'), meal());
    await second.close();

    assert.ok(wasmTypes.length > 0 && wasmTypes.every((ct) => ct === 'application/wasm'), `sqlite3.wasm served as application/wasm: ${wasmTypes.join(', ')}`);
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
