/**
 * The phone app (issue 29 items 2 and 3, first half): the desktop's screens on the phone page,
 * answered by the service's own routes in the phone's worker over its own database. In Chromium
 * at 390×844 (Pixel 7's touch and user agent, an iPhone's screen), against the built phone app
 * (build/phone) served with the phone's CSP, and a real `chyme serve` for the numbers to agree with.
 *
 * - A meal logged with the keyboard shows on Today, and after a reload; offline, logging still
 *   works; no request for /v1 ever leaves the page (the worker answers them).
 * - For the same month of meals and sleep, the phone's scores, overnight scores and timeline
 *   (the API's answers and the Score and Timeline screens' text) equal the Node service's.
 * - axe (WCAG 2.2 AA and best practices, any impact) finds nothing on each phone screen, light and dark;
 *   the header is not pinned and takes well under a fifth of the screen; no CSP violation, no
 *   console error.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { addDays } from '../../server/time/tz.js';
import { activeAttr, axe, formatViolations, history, launchBrowser, openApp, pickFood, resultsDir, seed, skipReason, startServer, until, waitForToday, type Server } from './harness.js';
import { APP, appFileOf, PHONE, phoneApi, phoneSkip, serveStatic, waitReady, watch, type StorageGlobal, type PhoneSite } from './phone-harness.js';

const skip = phoneSkip || (skipReason() ?? false);
const PHONE_SCREEN = { width: 390, height: 844 };

interface List<T> {
  data: T[];
  has_more: boolean;
}

/** The page's globals these tests use (the tests are typed without the DOM library). */
type DomGlobal = {
  location: { hash: string };
  document: { documentElement: { scrollWidth: number } };
  getComputedStyle(element: unknown): { position: string };
};

/** Shows a screen the way a link does: a new hash. */
const goTo = (page: Page, hash: string) => page.evaluate((h) => ((globalThis as unknown as DomGlobal).location.hash = h), hash);

/** An answer without what differs between two databases holding the same history: generated ids. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'id' && !k.endsWith('_id') && k !== 'created' && k !== 'updated')
        .map(([k, v]) => [k, withoutIds(v)]),
    );
  }
  return value;
}

describe('the phone app: the desktop screens over the phone’s own /v1', { skip }, () => {
  let browser: Browser;
  let site: PhoneSite;
  let server: Server;
  const shots = resultsDir('phone');
  const problems: string[] = [];
  const leftThePage: string[] = [];

  async function phoneContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ ...devices['Pixel 7'], viewport: PHONE_SCREEN, timezoneId: 'UTC', locale: 'en-GB' });
    context.on('request', (r) => {
      if (new URL(r.url()).pathname.includes('/v1/')) leftThePage.push(r.url());
    });
    return context;
  }

  async function openPhone(context: BrowserContext, hash = ''): Promise<Page> {
    const page = await context.newPage();
    watch(page, problems);
    await page.goto(`${site.app}phone.html${hash}`);
    await waitReady(page);
    return page;
  }

  before(async () => {
    site = await serveStatic();
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => site?.server.close(r));
  });

  test('logs a meal with the keyboard and shows it on Today, after a reload too, and offline; /v1 never leaves the page', async (t) => {
    const context = await phoneContext();
    const page = await openPhone(context, '#/log');
    // The worker's own requests (the service worker fetches the table once more, to keep it).
    const foodTable: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('usda-sr') && r.serviceWorker() === null) foodTable.push(r.url());
    });
    const form = page.getByTestId('meal-form');
    await form.waitFor();
    await form.getByLabel('Description', { exact: true }).focus();
    await page.keyboard.type('Banana on the phone');
    await page.keyboard.press('Tab');
    // The shipped food table, searched in the worker.
    await pickFood(page, 'banana', /^Bananas, raw/);
    await until(async () => (await activeAttr(page, 'data-staged-amount')) !== null, 'the amount field to have focus');
    await page.keyboard.type('1');
    await page.keyboard.press('Enter');
    await until(async () => (await activeAttr(page, 'role')) === 'combobox', 'focus back in the search box');
    // Enter in the empty search box logs the meal.
    await page.keyboard.press('Enter');
    await page.getByTestId('toast').filter({ hasText: 'Logged' }).waitFor();

    await page.getByRole('link', { name: 'Today' }).click();
    await waitForToday(page);
    const row = page.getByTestId('meal-row').filter({ hasText: 'Banana on the phone' });
    await row.waitFor();
    const kcal = await page.getByTestId('so-far-kcal').innerText();
    assert.match(kcal, /[1-9]\d*\s*kcal/, `Today counts the banana: ${kcal}`);

    await page.reload();
    await waitReady(page);
    await waitForToday(page);
    await row.waitFor();
    assert.equal(await page.getByTestId('so-far-kcal').innerText(), kcal, 'the same day after a reload');
    assert.deepEqual(foodTable, [], 'the reopened database holds the food table: the worker does not fetch it again');

    // Offline, the open page keeps working, as nothing it asks goes out (an offline reload is
    // phone-offline.test.ts's). Waiting for the Gut score screen's code keeps this test about the
    // page rather than about the service worker's cache.
    await until(() => page.evaluate(() => performance.getEntriesByType('resource').some((e) => /\/Score-[\w-]+\.js$/.test(e.name))), 'the Score screen’s code to be loaded');
    const beforeOffline = problems.length;
    await context.setOffline(true);
    await page.getByRole('link', { name: 'Log meal' }).click();
    await form.getByLabel('Description', { exact: true }).fill('Tea, offline');
    await form.getByLabel('Calories (kcal)', { exact: true }).fill('30');
    await form.getByRole('button', { name: 'Log meal', exact: true }).click();
    await page.getByTestId('toast').filter({ hasText: 'Logged' }).waitFor();
    await page.getByRole('link', { name: 'Today' }).click();
    await page.getByTestId('meal-row').filter({ hasText: 'Tea, offline' }).waitFor();
    await context.setOffline(false);
    // Chromium fetches the favicon again on a navigation within the page, which fails offline
    // until the service worker keeps the app's files; anything else that failed is a problem.
    const offline = problems.splice(beforeOffline);
    problems.push(...offline.filter((p) => !/ERR_INTERNET_DISCONNECTED/.test(p) || (/^request failed:/.test(p) && !p.startsWith(`request failed: ${APP}icon.svg `))));

    assert.deepEqual(leftThePage, [], 'no /v1 request left the page');
    assert.deepEqual(site.requests.filter((p) => p.includes('/v1')), [], 'the server saw no /v1 request');

    // First load's transfer (docs/phone.md): every file fetched, gzip -9 as a server would send it.
    const files = [...new Set(site.requests.map(appFileOf))].filter((f) => f !== null);
    const sizes = files.map((p) => {
      const raw = readFileSync(join(PHONE, p));
      return { p, raw: raw.length, gz: p.endsWith('.gz') ? raw.length : gzipSync(raw, { level: 9 }).length };
    });
    const kb = (n: number) => (n / 1024).toFixed(0);
    t.diagnostic(`first load: ${sizes.length} files, ${kb(sizes.reduce((s, f) => s + f.raw, 0))} KB raw, ${kb(sizes.reduce((s, f) => s + f.gz, 0))} KB gzip: ${sizes.map((f) => `${f.p.replace('assets/', '')} ${kb(f.gz)}`).join(', ')}`);
    await context.close();
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });

  test('for the same month of meals and sleep, the phone’s scores and timeline equal the Node service’s, on screen too', async (t) => {
    const data = history(30, Date.now());
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = addDays(today, -1);
    const first = addDays(today, -30);
    await seed(server, data);

    const context = await phoneContext();
    const page = await openPhone(context);
    assert.equal((await phoneApi(page, 'PATCH', '/v1/settings', { timezone: 'UTC' })).status, 200);
    const failures = await page.evaluate(async (d) => {
      const s = (globalThis as unknown as StorageGlobal).chymeStorage;
      const bad: string[] = [];
      for (const m of d.meals) {
        const r = await s.request('POST', '/v1/nutrition/meals', m);
        if (r.status !== 201) bad.push(JSON.stringify(r.body));
      }
      for (const night of d.sleep) {
        const r = await s.request('POST', '/v1/sleep/sessions', { ...night, source: 'e2e' });
        if (r.status !== 201) bad.push(JSON.stringify(r.body));
      }
      return bad;
    }, data);
    assert.deepEqual(failures, [], 'the phone took the same history');

    const range = `start_date=${first}&end_date=${yesterday}`;
    for (const path of ['/v1/digestion/scores/daily', '/v1/digestion/scores/overnight']) {
      const node = await server.api<List<unknown>>('GET', `${path}?${range}`);
      const phone = await phoneApi<List<unknown>>(page, 'GET', path, undefined, { start_date: first, end_date: yesterday });
      assert.equal(phone.status, 200);
      assert.ok(node.body.data.length >= 29, `${path}: a month of answers`);
      assert.deepEqual(withoutIds(phone.body), withoutIds(node.body), `${path}: the phone's equal the service's`);
    }
    const week = { start_date: addDays(today, -7), end_date: yesterday, limit: '100' };
    const nodeTimeline = await server.api<List<unknown>>('GET', `/v1/digestion/timeline?${new URLSearchParams(week).toString()}`);
    const phoneTimeline = await phoneApi<List<unknown>>(page, 'GET', '/v1/digestion/timeline', undefined, week);
    assert.ok(nodeTimeline.body.data.length >= 20, 'a week of timeline entries');
    assert.deepEqual(withoutIds(phoneTimeline.body), withoutIds(nodeTimeline.body), 'the timeline: the phone’s equals the service’s');

    // The screens: the same text on the phone as on the desktop app at the same size.
    const desktop = await openApp(browser, server, { viewport: PHONE_SCREEN });
    const screens = async (p: Page) => {
      await goTo(p, '#/score');
      await p.getByTestId('score-value').waitFor();
      await p.getByTestId('overnight').waitFor();
      await p.getByRole('button', { name: 'Previous day' }).click();
      const dayCard = p.locator('.card--score');
      await until(async () => !(await dayCard.innerText()).startsWith('Today'), 'yesterday’s score');
      const score = await dayCard.innerText();
      const overnight = await p.getByTestId('overnight').innerText();
      await goTo(p, `#/timeline?day=${yesterday}`);
      const chart = p.locator(`[data-testid="timeline-day"][data-day="${yesterday}"]`);
      await chart.getByTestId('timeline-bar').first().waitFor();
      return { score, overnight, timeline: await chart.textContent() };
    };
    const onPhone = await screens(page);
    const onDesktop = await screens(desktop.page);
    assert.match(onPhone.score, /\d/, 'a score is shown');
    assert.deepEqual(onPhone, onDesktop, 'Score (yesterday, last night) and Timeline (yesterday) read the same');
    assert.deepEqual(desktop.problems, []);
    await desktop.context.close();

    // Page load to Today drawn, with a month of history (not asserted: the machine is shared).
    const toToday = async (p: Page) => {
      await goTo(p, '#/today');
      await p.reload();
      await waitForToday(p);
      return p.evaluate(() => performance.now());
    };
    const desktopAgain = await openApp(browser, server, { viewport: PHONE_SCREEN });
    const phoneMs: number[] = [];
    const desktopMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      phoneMs.push(await toToday(page));
      desktopMs.push(await toToday(desktopAgain.page));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    t.diagnostic(`load → Today with a month: phone ${median(phoneMs).toFixed(0)} ms (${phoneMs.map((m) => m.toFixed(0)).join(', ')}), desktop renderer over HTTP ${median(desktopMs).toFixed(0)} ms (${desktopMs.map((m) => m.toFixed(0)).join(', ')}), ratio ${(median(phoneMs) / median(desktopMs)).toFixed(2)}×`);
    await desktopAgain.context.close();

    // Every phone screen, light and dark, at 390×844. The scheme is set before the page loads, so
    // axe never measures colours in the middle of their transition.
    const shown = [
      { name: 'Today', hash: '#/today', ready: '[data-testid="dial-state"]' },
      { name: 'Log meal', hash: '#/log', ready: '[data-testid="recent"]' },
      { name: 'Gut score', hash: '#/score', ready: '[data-testid="trend-chart"] .recharts-surface' },
      { name: 'Timeline', hash: '#/timeline', ready: '[data-testid="timeline-day"]' },
      { name: 'Integrations', hash: '#/integrations', ready: '[data-testid="sync-card"]' },
    ];
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await goTo(page, '#/today');
      await page.reload();
      await waitReady(page);
      await waitForToday(page);
      const nav = (await page.getByRole('navigation', { name: 'Screens' }).getByRole('link').allInnerTexts()).map((label) => label.trim());
      assert.deepEqual(nav, shown.map((s) => s.name), 'the phone’s screens, with the desktop’s labels');
      for (const screen of shown) {
        await goTo(page, screen.hash);
        await page.locator(screen.ready).first().waitFor();
        await page.screenshot({ path: join(shots, `${screen.hash.slice(2)}-${colorScheme}.png`) });
        const violations = await axe(page);
        assert.deepEqual(violations, [], `axe, ${screen.name}, ${colorScheme}: ${formatViolations(violations)}`);
        const header = await page.locator('.sidebar').boundingBox();
        assert.ok(header && header.height < PHONE_SCREEN.height / 8, `${screen.name}: the header takes ${header?.height} px of 844`);
        assert.equal(await page.locator('.sidebar').evaluate((el) => (globalThis as unknown as DomGlobal).getComputedStyle(el).position), 'static', 'the header scrolls away');
        const width = await page.evaluate(() => (globalThis as unknown as DomGlobal).document.documentElement.scrollWidth);
        assert.ok(width <= PHONE_SCREEN.width, `${screen.name}: nothing wider than the screen (${width} px)`);
      }
    }
    await context.close();
    assert.deepEqual(leftThePage, [], 'no /v1 request left the phone page');
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
