/**
 * Issue 29's "Today updated within 100 ms of pressing Log", for what Today itself does to meals:
 * its Quick add, a row's "Log again now" and Delete. Each meal shows in Today's meals (and So
 * far) with its note, without waiting for Today to be loaded again (the test holds every later
 * load of the snapshot); after the reload it is listed once. Undo takes a quick add off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Route } from 'playwright-core';
import { dismissToasts, iso, launchBrowser, openApp, skipReason, startServer, todayUtcAt, until, waitForToday, type Server } from './harness.js';

const skip = skipReason();
const MIN = 60_000;

describe('Today: a meal added, logged again or deleted shows with its note', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const midnight = todayUtcAt(0);

  /** The breakfast logged before the page opens. */
  let first: string;

  before(async () => {
    server = await startServer({ clockMs: midnight + 13 * 60 * MIN, tz: 'UTC' });
    browser = await launchBrowser();
    const r = await server.api('POST', '/v1/nutrition/meals', { timestamp: iso(midnight + 8 * 60 * MIN), meal_type: 'breakfast', description: 'Porridge', macros: { calories: 500 } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    first = (r.body as { id: string }).id;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('Quick add, Log again now and Delete show in Today\'s meals and So far with their notes; listed once after the reload', async () => {
    const { page, context, problems } = await openApp(browser, server);
    const held: Route[] = [];
    let holding = false;
    const release = async () => {
      holding = false;
      for (const route of held.splice(0)) await route.continue();
    };
    const isSnapshot = (url: URL) => url.pathname === '/v1/snapshot';
    try {
      await page.route(isSnapshot, (route) => void (holding ? held.push(route) : route.continue()));
      await page.goto(`${server.url}/#/today`);
      await waitForToday(page);
      const card = page.locator('section.card', { hasText: 'Today’s meals' });
      await card.getByTestId('meal-row').filter({ hasText: 'Porridge' }).waitFor();
      assert.match(await page.getByTestId('so-far-kcal').innerText(), /^500\s*kcal$/);

      // Every load of Today from here is held: the meal can only come from the POST's answer.
      holding = true;
      const quick = page.getByRole('form', { name: 'Quick add calories' });
      await quick.getByRole('textbox').fill('321');
      await quick.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByTestId('toast').filter({ hasText: 'Added 321 kcal' }).waitFor();
      const row = card.getByTestId('meal-row').filter({ hasText: '321 kcal' });
      assert.equal(await row.count(), 1, 'the meal is listed when its note shows');
      assert.match(await page.getByTestId('so-far-kcal').innerText(), /^821\s*kcal$/, 'So far counts it');

      await until(() => held.length > 0, 'Today to be loaded again after the meal');
      const reloaded = page.waitForResponse((r) => isSnapshot(new URL(r.url())));
      await release();
      await reloaded;
      await until(async () => (await row.count()) === 1 && (await card.getByTestId('meal-row').count()) === 2, 'the meal listed once after the reload');
      assert.match(await page.getByTestId('so-far-kcal').innerText(), /^821\s*kcal$/);

      // Undo: gone from the list and from So far.
      await page.getByTestId('toast').getByRole('button', { name: 'Undo' }).click();
      await until(async () => (await row.count()) === 0, 'the meal gone after Undo');
      await until(async () => /^500\s*kcal$/.test(await page.getByTestId('so-far-kcal').innerText()), 'So far back to 500 kcal');
      await dismissToasts(page);

      // A row's "Log again now", then Delete of the meal it made, each with Today's loads held.
      const porridge = card.getByTestId('meal-row').filter({ hasText: 'Porridge' });
      holding = true;
      await porridge.getByRole('button', { name: 'Log Porridge again now' }).click();
      await page.getByTestId('toast').filter({ hasText: 'Logged “Porridge”' }).waitFor();
      assert.equal(await porridge.count(), 2, 'the meal logged again is listed when its note shows');
      assert.match(await page.getByTestId('so-far-kcal').innerText(), /^1,?000\s*kcal$/);
      await release();
      await dismissToasts(page);
      const again = await until(async () => {
        const ids = await porridge.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-meal-id')));
        return ids.length === 2 && ids;
      }, 'both listed after the reload');
      const newer = card.locator(`[data-meal-id="${again.find((id) => id !== first)!}"]`);
      holding = true;
      await newer.getByRole('button', { name: 'Delete Porridge' }).click();
      await page.getByTestId('toast').filter({ hasText: 'Deleted “Porridge”' }).waitFor();
      assert.equal(await porridge.count(), 1, 'the deleted meal is gone when its note shows');
      assert.equal(await porridge.getAttribute('data-meal-id'), first, 'the first Porridge stays');
      assert.match(await page.getByTestId('so-far-kcal').innerText(), /^500\s*kcal$/);
      await release();
      const day = iso(midnight).slice(0, 10);
      const left = await server.api('GET', `/v1/nutrition/meals?start_date=${day}&end_date=${day}`);
      assert.equal(left.status, 200, JSON.stringify(left.body));
      assert.deepEqual((left.body as { data: Array<{ description: string | null }> }).data.map((m) => m.description), ['Porridge']);
      assert.deepEqual(problems, []);
    } finally {
      await release();
      await context.close();
    }
  });
});
