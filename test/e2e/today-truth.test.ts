/**
 * Issue 28: what Today says is true. A fresh database reads "No data", not 100 "Optimal"; a meal
 * logged with calories only adds no protein ("–", and the totals say what they leave out); a meal
 * logged for later is not yet "so far"; a time not on today carries its day. Axe stays clean in
 * light and dark. Screenshots of before (empty) and after go to test-results/today-truth/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axe, formatViolations, iso, launchBrowser, openApp, resultsDir, skipReason, startServer, todayUtcAt, waitForToday, type Server } from './harness.js';

const skip = skipReason();
const MIN = 60_000;

describe('Today tells the truth (issue 28)', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('today-truth');
  const midnight = todayUtcAt(0);

  before(async () => {
    server = await startServer({ clockMs: midnight + 9 * 60 * MIN, tz: 'UTC' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: nothing logged reads No data; calories only read "–" for protein; a later meal is not counted yet`, async () => {
      const { page, context, problems } = await openApp(browser, server, { colorScheme: theme });
      try {
        if (theme === 'light') {
          await page.goto(`${server.url}/#/today`);
          await waitForToday(page);
          await page.getByTestId('today-score-none').waitFor();
          assert.match(await page.getByTestId('today-score-none').innerText(), /^No data/);
          assert.equal(await page.locator('.card', { hasText: 'Gut score' }).getByText('Optimal').count(), 0);
          await page.screenshot({ path: join(dir, `empty-${theme}.png`), fullPage: true });
          const empty = await axe(page);
          assert.deepEqual(empty, [], formatViolations(empty));
          // Yesterday's dinner, a breakfast with calories only, and a snack logged for 2 h ahead.
          for (const [at, meal_type, calories] of [[midnight - 4.5 * 60 * MIN, 'dinner', 600], [midnight + 8 * 60 * MIN, 'breakfast', 500], [midnight + 11 * 60 * MIN, 'snack', 200]] as const) {
            const r = await server.api('POST', '/v1/nutrition/meals', { timestamp: iso(at), meal_type, macros: { calories } });
            assert.equal(r.status, 201, JSON.stringify(r.body));
          }
        }
        await page.goto(`${server.url}/#/today`);
        await waitForToday(page);
        const kcal = page.getByTestId('so-far-kcal');
        await kcal.waitFor();
        // The card shows before the day's meals have loaded (0 kcal): wait for them (a bound on hangs).
        for (const deadline = Date.now() + 15_000; /^0\s*kcal$/.test((await kcal.innerText()).trim()) && Date.now() < deadline; ) await page.waitForTimeout(100);
        assert.match(await kcal.innerText(), /^500\s*kcal$/, 'the snack at 11:00 is not eaten yet');
        assert.equal(await page.getByTestId('so-far-protein_g').innerText(), '–');
        assert.equal(await page.getByText(/P 0 g/).count(), 0, 'no meal reads 0 g of a protein nobody gave');
        // Fasted from last night's dinner: the time says it was yesterday.
        const since = page.getByTestId('dial-since');
        if ((await page.locator('[data-state="fasted"]').count()) > 0) assert.match(await since.innerText(), /yesterday/);
        await page.screenshot({ path: join(dir, `logged-${theme}.png`), fullPage: true });
        const found = await axe(page);
        assert.deepEqual(found, [], formatViolations(found));
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});
