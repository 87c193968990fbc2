/**
 * The app's clock at midnight (issue 18 item 5), with the browser's clock at 23:59:30: the first
 * screen shows the service's day, not the machine's, and a Gut score screen left open across
 * midnight moves on to the new day until the person steps to another one, and its sleep form to
 * the new night.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { history, iso, launchBrowser, openApp, seed, skipReason, startServer, todayUtcAt, until, type Server } from './harness.js';

const skip = skipReason();

describe('the clock at midnight', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dayMs = 86_400_000;
  // Midnight between two days, UTC: `before` is the day that ends, `after` the one that starts.
  const midnight = todayUtcAt(0);
  const dayBefore = iso(midnight - dayMs).slice(0, 10);
  const dayAfter = iso(midnight).slice(0, 10);
  const beforeMidnight = midnight - 30_000;

  before(async () => {
    server = await startServer({ clockMs: beforeMidnight, tz: 'UTC' });
    browser = await launchBrowser();
    await seed(server, history(10, beforeMidnight));
    const r = await server.api('POST', '/v1/nutrition/meals', {
      timestamp: iso(midnight - 3 * 3600_000),
      meal_type: 'dinner',
      description: 'Late dinner',
      macros: { calories: 600, protein_g: 30, carbs_g: 60, fat_g: 20 },
    });
    assert.ok(r.status < 300, JSON.stringify(r.body));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** The day the Gut score card shows (its stepper's date) and its heading. */
  async function shownDay(page: Page): Promise<{ day: string; heading: string }> {
    const card = page.locator('.card--score');
    return { day: await card.locator('input[type="date"]').inputValue(), heading: await card.getByRole('heading').first().innerText() };
  }

  /** Waits until the Gut score card shows `day`. */
  async function shows(page: Page, day: string): Promise<void> {
    // (The page's globals, typed here without the DOM library.)
    const dateOnCard = (d: string) =>
      (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document.querySelector('.card--score input[type="date"]')?.value === d;
    await page.waitForFunction(dateOnCard, day, { timeout: 15_000, polling: 100 });
  }

  /** Loads #/score afresh (a first render, not a screen change) with both clocks at the given instants. */
  async function loadScore(page: Page, serviceMs: number, browserMs: number): Promise<void> {
    await page.goto(`${server.url}/#/score`);
    server.setClock(serviceMs);
    await page.clock.setSystemTime(browserMs);
    await page.reload();
    await page.locator('.card--score input[type="date"]').waitFor({ timeout: 20_000 });
  }

  test('the first screen shows the service’s day when the machine’s clock is behind it (23:59:30 against 00:00:30)', async () => {
    const { page, context, problems } = await openApp(browser, server, { clockMs: beforeMidnight });
    try {
      await loadScore(page, midnight + 30_000, beforeMidnight);
      // The page's own clock still says the day before: the screen follows the service's.
      assert.equal(await page.evaluate(() => new Date().toISOString().slice(0, 10)), dayBefore);
      assert.deepEqual(await shownDay(page), { day: dayAfter, heading: 'Today' });
      assert.match(await page.getByTestId('score-value').locator('..').innerText(), /PENDING/);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('a Gut score screen left open across midnight moves to the new day, until the person steps to another', async () => {
    const { page, context, problems } = await openApp(browser, server, { clockMs: beforeMidnight });
    try {
      await loadScore(page, beforeMidnight, beforeMidnight);
      assert.deepEqual(await shownDay(page), { day: dayBefore, heading: 'Today' });
      // The sleep form offers last night: the one before `dayBefore`.
      const fellAsleep = page.getByLabel('Fell asleep');
      assert.equal(await fellAsleep.inputValue(), `${iso(midnight - 2 * dayMs).slice(0, 10)}T23:00`);

      // Midnight passes on both clocks.
      server.setClock(midnight + 30_000);
      await page.clock.fastForward('01:00');
      await shows(page, dayAfter);
      assert.deepEqual(await shownDay(page), { day: dayAfter, heading: 'Today' });
      // …and so does the sleep form: the night that has just begun, not the one before.
      await until(async () => (await fellAsleep.inputValue()) === `${dayBefore}T23:00`, 'the sleep form on the new night');

      // Once the person has stepped to a day, that day stays as the clock runs on.
      await page.locator('.card--score').getByRole('button', { name: 'Previous day' }).click();
      await shows(page, dayBefore);
      server.setClock(midnight + 90_000);
      await page.clock.fastForward('01:00');
      await page.waitForTimeout(500);
      assert.equal((await shownDay(page)).day, dayBefore);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
