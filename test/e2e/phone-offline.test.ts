/**
 * The phone app offline (issue 29 items 1 and 2): its service worker (renderer/src/phone/sw.ts)
 * keeps the app's files, so the app opens with no network at all, and a new build waits for the
 * person's "Reload". In Chromium at 390×844 (Pixel 7's touch and user agent), against a copy of
 * build/phone served under /app/ by the relay's own file server (PhoneAppFiles).
 *
 * - After a first load and one meal, offline, a reload shows Today with the meal from the phone's
 *   own storage, and every request of the page and its worker is answered by the service worker.
 * - A second visit online fetches only the service worker's script from the server (< 50 KB).
 * - A half-done deploy (a file that is not the one listed) fails the install; the running version
 *   stays, with its cache.
 * - A new build (another precache list) installs beside the old one and waits: the page offers
 *   "A new version is ready — Reload", first stop of the keyboard and axe-clean in light and dark;
 *   Reload brings the new files, and the old cache is gone.
 * - No console errors, no CSP violations.
 *
 * Figures (diagnostic lines, not asserted): the first install's bytes as sent and gzip-compressed,
 * the second visit's bytes, and the time from an offline reload to Today.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { devices, type Browser, type Request } from 'playwright-core';
import { writeServiceWorker, SERVICE_WORKER } from '../../scripts/phone-service-worker.js';
import { PHONE_CONTENT_SECURITY_POLICY } from '../../server/content-security.js';
import { axe, formatViolations, launchBrowser, resultsDir, skipReason, until, waitForToday } from './harness.js';
import { APP, appFileOf, clearOfMidnight, PHONE, phoneApi, phoneSkip, serveStatic, waitReady, watch, type PhoneSite } from './phone-harness.js';

const skip = phoneSkip || (skipReason() ?? false);
const PHONE_SCREEN = { width: 390, height: 844 };
const KB = 1024;

/** The page's globals these tests use (typed without the DOM library). */
type Worker = { state: string; addEventListener(type: 'statechange', listener: () => void): void };
type SwGlobal = {
  navigator: {
    serviceWorker: {
      controller: { scriptURL: string } | null;
      ready: Promise<{ active: { state: string } | null }>;
      getRegistration(): Promise<{ update(): Promise<unknown>; installing: Worker | null; waiting: Worker | null } | undefined>;
    };
  };
  caches: { keys(): Promise<string[]> };
  document: { activeElement: { textContent: string | null } | null; documentElement: { outerHTML: string } };
};

const sum = (xs: { bytes: number }[]) => xs.reduce((a, x) => a + x.bytes, 0);

describe('the phone app offline: its service worker', { skip }, () => {
  let browser: Browser;
  let dir: string;
  let site: PhoneSite;
  const problems: string[] = [];

  before(async () => {
    // A copy, so that the test can make "a new build" of it.
    dir = mkdtempSync(join(tmpdir(), 'chyme-phone-offline-'));
    cpSync(PHONE, dir, { recursive: true });
    site = await serveStatic({ root: dir });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => site?.server.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('opens offline from its own storage, a second visit costs only the worker script, and a new build waits for Reload', async (t) => {
    const context = await browser.newContext({ ...devices['Pixel 7'], viewport: PHONE_SCREEN, timezoneId: 'UTC', locale: 'en-GB', reducedMotion: 'reduce' });
    const page = await context.newPage();
    watch(page, problems);
    const app = site.app;

    // First visit: the app opens, the service worker installs (every file, checked against its hash) and takes the page.
    await page.goto(app);
    await waitReady(page);
    await page.evaluate(() => (globalThis as unknown as SwGlobal).navigator.serviceWorker.ready);
    await until(() => page.evaluate(() => (globalThis as unknown as SwGlobal).navigator.serviceWorker.controller?.scriptURL), 'the service worker to control the page');
    const firstVisit = [...site.sent];
    // A service worker runs under the policy its script is served with, as the database worker does.
    assert.equal((await fetch(`${app}${SERVICE_WORKER}`)).headers.get('content-security-policy'), PHONE_CONTENT_SECURITY_POLICY, 'sw.js is served with the phone’s policy');
    // The file each answer was (the app's address is its page), and each file once at gzip -9 for comparison.
    const distinct = new Set(firstVisit.map((s) => appFileOf(s.path)).filter((f) => f !== null));
    const gzip = [...distinct].reduce((a, file) => a + gzipSync(readFileSync(join(dir, file)), { level: 9 }).length, 0);
    t.diagnostic(`first install: ${firstVisit.length} responses (${firstVisit.filter((s) => s.status === 304).length} of them 304), ${(sum(firstVisit) / KB).toFixed(0)} KB sent as the relay's file server compresses it; ${distinct.size} distinct files, ${(gzip / KB).toFixed(0)} KB at gzip -9`);
    assert.ok([...distinct].some((f) => /^assets\/jsQR-[\w-]+\.js$/.test(f)), `the QR code reader's chunk is kept with the rest: ${[...distinct].join(', ')}`);
    assert.ok(sum(firstVisit) <= 3 * KB * KB, `the first install transfers at most 3 MB, compressed as served (${sum(firstVisit)} bytes)`);

    // Looked for on Today after the reload below: today still then.
    await clearOfMidnight(1000, 120_000);
    const meal = await phoneApi<{ id: string }>(page, 'POST', '/v1/nutrition/meals', {
      timestamp: new Date(Date.now() - 1000).toISOString(),
      meal_type: 'snack',
      description: 'Apple before going offline',
      macros: { calories: 95 },
    });
    assert.equal(meal.status, 201);

    // Offline, reload: every request of the page (and its database worker) is answered by the service worker.
    const requests: Request[] = [];
    const failed: string[] = [];
    page.on('request', (r) => requests.push(r));
    page.on('requestfailed', (r) => failed.push(`${r.url()}: ${r.failure()?.errorText}`));
    const heardBefore = site.requests.length;
    await context.setOffline(true);
    const start = performance.now();
    await page.reload();
    await waitReady(page);
    await waitForToday(page);
    await page.getByTestId('meal-row').filter({ hasText: 'Apple before going offline' }).waitFor();
    t.diagnostic(`offline reload → Today with the meal: ${(performance.now() - start).toFixed(0)} ms`);
    // The Gut score screen's code (loaded after Today) comes from the cache too.
    await page.getByRole('link', { name: 'Gut score' }).click();
    await page.locator('[data-testid="trend-chart"]').first().waitFor();
    const network = [];
    for (const r of requests) {
      if (r.url().startsWith('data:')) continue;
      const response = await r.response();
      if (!response?.fromServiceWorker()) network.push(r.url());
    }
    assert.ok(requests.some((r) => /core-worker-[\w-]+\.js$/.test(r.url())) && requests.some((r) => /\.wasm$/.test(r.url())), `the worker's script and SQLite's WASM were among the requests: ${requests.map((r) => r.url()).join(', ')}`);
    assert.deepEqual(network, [], 'no request of the page went to the network');
    assert.deepEqual(failed, [], 'no request failed');
    // The service worker answers from its cache, not by fetching on the page's behalf: the server
    // hears nothing but the browser's own update check of sw.js (after a navigation), which
    // Playwright's offline mode does not stop (a phone with no network fails it quietly).
    assert.deepEqual(site.requests.slice(heardBefore).filter((p) => p !== `${APP}${SERVICE_WORKER}`), [], 'the server heard nothing from the page or the service worker');
    await context.setOffline(false);
    page.removeAllListeners('request');
    page.removeAllListeners('requestfailed');

    // Second visit, online: the page and its files come from the cache; the browser asks only for sw.js.
    const sentBefore = site.sent.length;
    const heardOnline = site.requests.length;
    await page.goto(app);
    await waitReady(page);
    await waitForToday(page);
    // The browser's update check runs beside the page's load; give it its moment to finish.
    await until(() => site.requests.slice(heardOnline).includes(`${APP}${SERVICE_WORKER}`), 'the update check for sw.js');
    const second = site.sent.slice(sentBefore);
    t.diagnostic(`second visit: ${(sum(second) / KB).toFixed(1)} KB from the server (${second.map((s) => `${s.path} ${s.bytes}`).join(', ')})`);
    assert.ok(sum(second) < 50 * KB, `a second visit transfers under 50 KB (${sum(second)} bytes)`);
    assert.deepEqual(second.map((s) => s.path), [`${APP}${SERVICE_WORKER}`], 'only the service worker script came from the server');

    // A deploy half done: sw.js lists a page that the server no longer has. The new worker's
    // install fails on the hash, and the running version stays, its cache whole, with no prompt.
    const page1 = readFileSync(join(dir, 'phone.html'), 'utf8');
    writeFileSync(join(dir, 'phone.html'), page1.replace('</body>', '<!-- listed --></body>'));
    await writeServiceWorker(dir);
    writeFileSync(join(dir, 'phone.html'), page1.replace('</body>', '<!-- not listed --></body>'));
    const halfDone = await page.evaluate(async () => {
      const registration = (await (globalThis as unknown as SwGlobal).navigator.serviceWorker.getRegistration())!;
      await registration.update();
      const worker = registration.installing ?? registration.waiting;
      if (!worker) return 'no new worker';
      if (worker.state === 'installing') await new Promise<void>((r) => worker.addEventListener('statechange', () => worker.state !== 'installing' && r()));
      return worker.state;
    });
    assert.equal(halfDone, 'redundant', 'an install that gets a file not of its list fails');
    assert.equal(await page.getByRole('complementary', { name: 'Update' }).count(), 0, 'no prompt for a failed install');
    assert.equal((await page.evaluate(() => (globalThis as unknown as SwGlobal).caches.keys())).length, 1, 'the failed version’s cache is gone, the running one’s kept');
    await page.reload();
    await waitForToday(page);

    // A new build: the page changed, so the list (and sw.js) did. A visit installs it, and it waits.
    writeFileSync(join(dir, 'phone.html'), page1.replace('</body>', '<!-- the next build --></body>'));
    await writeServiceWorker(dir);
    await page.reload();
    await waitReady(page);
    const prompt = page.getByRole('complementary', { name: 'Update' });
    await prompt.getByRole('status').filter({ hasText: 'A new version is ready' }).waitFor();
    assert.doesNotMatch(await page.content(), /the next build/, 'the running page keeps its files until the person reloads');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => (globalThis as unknown as SwGlobal).document.activeElement?.textContent), 'Reload', 'Reload is the first stop of the keyboard');
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({ path: join(resultsDir('phone'), `update-prompt-${colorScheme}.png`) });
      const violations = await axe(page);
      assert.deepEqual(violations, [], `axe with the prompt, ${colorScheme}: ${formatViolations(violations)}`);
    }
    await Promise.all([page.waitForEvent('load'), page.keyboard.press('Enter')]);
    await waitReady(page);
    assert.match(await page.content(), /the next build/, 'Reload brought the new build');
    assert.equal(await prompt.count(), 0, 'no prompt once on the new version');
    assert.equal((await page.evaluate(() => (globalThis as unknown as SwGlobal).caches.keys())).length, 1, 'the old version’s cache is deleted');

    await context.close();
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
