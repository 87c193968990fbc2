/**
 * Today's sleep card in the morning and the evening. At 7 AM after a night's sleep it used to read
 * "Ready for sleep — Now, since 11:02 PM yesterday": true of the stomach, useless to someone who has
 * just got up. Once up, it speaks of tonight (the latest time to finish eating for the usual
 * bedtime); a meal eaten after that time makes it say when lying down is fine again. A meal logged
 * inside the night is told as an insight.
 * The service runs on a test clock; screenshots go to test-results/today-tonight/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { iso, launchBrowser, openApp, resultsDir, skipReason, startServer, todayUtcAt, until, waitForToday, type Server } from './harness.js';

const skip = skipReason();
const MIN = 60_000;

describe('Today: the sleep card after a night', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('today-tonight');
  const midnight = todayUtcAt(0);

  before(async () => {
    server = await startServer({ clockMs: midnight + 7 * 60 * MIN, tz: 'UTC' });
    browser = await launchBrowser();
    // Dinner at 20:00 yesterday, then a night logged 23:02 → 06:40 with a snack at 00:30 inside it.
    for (const [at, meal_type, calories] of [[midnight - 4 * 60 * MIN, 'dinner', 700], [midnight + 30 * MIN, 'snack', 250]] as const) {
      const r = await server.api('POST', '/v1/nutrition/meals', { timestamp: iso(at), meal_type, macros: { calories } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    const night = await server.api('POST', '/v1/sleep/sessions', { start: iso(midnight - 58 * MIN), end: iso(midnight + 400 * MIN) });
    assert.equal(night.status, 201, JSON.stringify(night.body));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  // (Time flows from where the test clock was set, so a minute may pass between two reads.)
  test('at 7 AM it speaks of tonight; after a late meal, of when lying down is fine', async () => {
    // The browser's clock at the service's 7 AM too: Today counts time by the later of the two, and
    // the real time of day (after 20:02, the time to finish eating by) must not decide the test.
    const { page, context, problems } = await openApp(browser, server, { clockMs: midnight + 7 * 60 * MIN });
    /** The service's clock and the page's, moved together. */
    const setTime = async (ms: number) => {
      server.setClock(ms);
      await page.clock.setSystemTime(ms);
    };
    try {
      // Set again just before the page reads it: on a busy machine starting the browser took over two
      // minutes after `before` set it, and 13 h 02 min had become "13 h".
      await setTime(midnight + 7 * 60 * MIN);
      await page.goto(`${server.url}/#/today`);
      await waitForToday(page);
      const by = page.getByTestId('finish-eating-by');
      // (Once in CI it never showed, cause not found: the failure then says what Today showed instead.)
      await by.waitFor().catch(async (err: Error) => {
        await page.screenshot({ path: join(dir, 'morning-failed.png'), fullPage: true });
        throw new Error(`${err.message}\nToday read: ${(await page.getByTestId('today').innerText()).replace(/\s+/g, ' ').slice(0, 1500)}`);
      });
      // One logged night: the usual bedtime is 23:02, so finish eating by 20:02, 13 h from now.
      assert.match(await by.innerText(), /^20:02\s*in 13 h 0\d min$/);
      assert.match(await page.getByTestId('tonight-note').innerText(), /^For bed at 23:02, your usual bedtime/);
      assert.equal(await page.getByTestId('sleep-ready').count(), 0, 'no "Ready for sleep: Now, since last night"');
      assert.equal(await page.getByText('Ready for sleep').count(), 0);
      // The snack inside the logged night is told, with its time and the night it fell in.
      const flagged = page.locator('.insight--warning', { hasText: 'A meal was logged during your sleep' });
      await flagged.waitFor();
      assert.match(await flagged.innerText(), /inside the sleep you logged from 23:02 to 06:40 \(the first at 00:30, 250 kcal in all\)/);
      await page.screenshot({ path: join(dir, 'morning.png'), fullPage: true });

      // Breakfast: the card still speaks of tonight.
      await setTime(midnight + 7.5 * 60 * MIN);
      assert.equal((await server.api('POST', '/v1/nutrition/meals', { timestamp: iso(midnight + 7.5 * 60 * MIN), meal_type: 'breakfast', macros: { calories: 400 } })).status, 201);
      await until(async () => /in 12 h 3\d min/.test(await by.innerText()), 'the card to follow the breakfast and the clock');

      // A meal at 20:45, after the latest time: the card tells when lying down is fine, tonight.
      await setTime(midnight + 21 * 60 * MIN);
      assert.equal((await server.api('POST', '/v1/nutrition/meals', { timestamp: iso(midnight + (20 * 60 + 45) * MIN), meal_type: 'snack', macros: { calories: 300 } })).status, 201);
      // Between the page's clock passing 20:02 and the snack reaching the page, the card rightly reads
      // "Now, since 10:30" (three hours after breakfast): wait for the snack, not for the card alone.
      const ready = page.getByTestId('sleep-ready');
      let read = '';
      await until(async () => {
        read = (await ready.count()) ? (await ready.innerText()).replace(/\s+/g, ' ') : '(no card)';
        return /^23:45 tonight, in 2 h 4\d min$/.test(read);
      }, 'the card to say when lying down is fine after the 20:45 snack').catch((err: Error) => {
        throw new Error(`${err.message}; it read: ${read}`);
      });
      assert.equal(await by.count(), 0);
      await page.screenshot({ path: join(dir, 'evening.png'), fullPage: true });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
