/**
 * Issue 28, item 2's loose ends in the desktop meal screen: a day's calories add only the meals
 * that gave them and say how many they leave out ("–" when none did); a saved meal shows "–" for
 * a nutrient none of its foods gives, never 0; a recent meal without calories reads "– kcal".
 * Axe stays clean in light and dark. Screenshots go to test-results/unknown-totals/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axe, formatViolations, iso, launchBrowser, openApp, resultsDir, skipReason, startServer, todayUtcAt, until, type Server } from './harness.js';

const skip = skipReason();
const HOUR = 3_600_000;

describe('the meal screen adds only what is known (issue 28)', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('unknown-totals');
  const midnight = todayUtcAt(0);

  before(async () => {
    server = await startServer({ clockMs: midnight + 20 * HOUR, tz: 'UTC' });
    browser = await launchBrowser();
    const meals = [
      // Today: one meal with calories, one described only (its calories are unknown).
      { timestamp: iso(midnight + 8 * HOUR), meal_type: 'breakfast', description: 'Porridge', macros: { calories: 350, protein_g: 12 } },
      { timestamp: iso(midnight + 13 * HOUR), meal_type: 'lunch', description: 'Soup from the canteen' },
      // Yesterday: described only, so the day's calories are unknown altogether.
      { timestamp: iso(midnight - 6 * HOUR), meal_type: 'dinner', description: 'Dinner at a friend’s' },
    ];
    for (const body of meals) {
      const r = await server.api('POST', '/v1/nutrition/meals', body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    // Toast gives calories only; the egg gives protein too: carbs and fat are nobody's.
    const saved = await server.api<{ totals: Record<string, number | null> }>('POST', '/v1/nutrition/saved_meals', {
      name: 'Egg on toast',
      meal_type: 'breakfast',
      foods: [{ name: 'Toast', calories: 120 }, { name: 'Egg', calories: 72, protein_g: 6.3 }],
    });
    assert.equal(saved.status, 201, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.totals, { calories: 192, protein_g: 6.3, carbs_g: null, fat_g: null, fiber_g: null });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: day totals count the meals they leave out; unknown reads "–"`, async () => {
      const { page, context, problems } = await openApp(browser, server, { colorScheme: theme });
      try {
        await page.goto(`${server.url}/#/log`);
        const days = page.locator('.meal-day');
        await until(async () => (await days.count()) === 2, 'two days of meals');
        const today = page.locator('.meal-day', { has: page.locator('[data-meal-id]', { hasText: 'Porridge' }) });
        const yesterday = page.locator('.meal-day', { has: page.locator('[data-meal-id]', { hasText: 'Dinner at a friend’s' }) });
        assert.equal((await today.getByTestId('day-kcal').innerText()).trim(), '· 350 kcal (1 meal without calories not counted)');
        assert.equal((await yesterday.getByTestId('day-kcal').innerText()).trim(), '· – kcal');
        const soup = page.locator('[data-meal-id]', { hasText: 'Soup from the canteen' });
        assert.match(await soup.innerText(), /– kcal/);

        const savedMeal = page.getByTestId('saved-meals').getByRole('button', { name: /^Log now: Egg on toast/ });
        const meta = await savedMeal.locator('.relog__meta').innerText();
        assert.equal(meta, 'Breakfast · 192 kcal · P 6 g · C – g · F – g');
        const recentSoup = page.getByTestId('recent').getByRole('button', { name: /^Log again now: Soup from the canteen/ });
        assert.equal(await recentSoup.locator('.relog__meta').innerText(), 'Lunch · – kcal');

        await page.screenshot({ path: join(dir, `log-${theme}.png`), fullPage: true });
        const found = await axe(page);
        assert.deepEqual(found, [], formatViolations(found));
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }
});
