/**
 * Every screen, light and dark: a screenshot of each under test-results/screens/, an axe-core
 * check of each (no serious or critical violations), keyboard reachability of the navigation and
 * the theme toggle. The service runs on a test clock at 13:10 UTC today with 40 days of history.
 */
import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axe, formatViolations, history, iso, launchBrowser, openApp, resultsDir, seed, skipReason, startServer, type AxeViolation, type Server } from './harness.js';

const skip = skipReason();

const SCREENS: { name: string; hash: string; ready: string }[] = [
  { name: 'today', hash: '#/today', ready: '[data-testid="dial-state"]' },
  { name: 'log-meal', hash: '#/log', ready: '[data-testid="recent"]' },
  { name: 'gut-score', hash: '#/score', ready: '[data-testid="trend-chart"]' },
  { name: 'timeline-day', hash: '#/timeline', ready: '[data-testid="timeline-day"] [data-testid="timeline-bar"]' },
  { name: 'timeline-week', hash: '#/timeline?view=week', ready: '[data-testid="timeline-week"] .phase--fed' },
  { name: 'integrations', hash: '#/integrations', ready: '[data-testid="webhook-row"]' },
];

describe('every screen, light and dark', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let hook: HttpServer;
  const dir = resultsDir('screens');
  const dayMs = 86_400_000;
  const midnight = Math.floor(Date.now() / dayMs) * dayMs;
  const nowMs = midnight + (13 * 60 + 10) * 60_000;
  const violations: { where: string; list: AxeViolation[] }[] = [];

  before(async () => {
    server = await startServer({ clockMs: nowMs, tz: 'UTC' });
    browser = await launchBrowser();
    await seed(server, history(40, nowMs));
    // Today so far: breakfast and a lunch still being digested.
    for (const m of [
      { minute: 7 * 60 + 40, meal_type: 'breakfast', description: 'Porridge with banana and honey', foods: [{ name: 'Oats', calories: 300 }, { name: 'Banana', calories: 105 }, { name: 'Honey', calories: 60 }], macros: { protein_g: 12, carbs_g: 82, fat_g: 7, fiber_g: 8 }, micros: { sodium_mg: 90, caffeine_mg: 0 } },
      { minute: 10 * 60 + 30, meal_type: 'snack', description: 'Flat white', foods: [{ name: 'Flat white', calories: 110 }], macros: { protein_g: 6, carbs_g: 9, fat_g: 6 }, micros: { sodium_mg: 70, caffeine_mg: 130 } },
      { minute: 12 * 60 + 35, meal_type: 'lunch', description: 'Lentil soup and rye bread', foods: [{ name: 'Lentil soup', calories: 330 }, { name: 'Rye bread', calories: 160 }], macros: { protein_g: 24, carbs_g: 70, fat_g: 9, fiber_g: 16 }, micros: { sodium_mg: 900, caffeine_mg: 0 } },
    ]) {
      const { minute, ...body } = m;
      const r = await server.api('POST', '/v1/nutrition/meals', { ...body, timestamp: iso(midnight + minute * 60_000) });
      assert.ok(r.status < 300, JSON.stringify(r.body));
    }
    // Something to show on Integrations: a key, and a webhook with a delivery.
    hook = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const port = (hook.address() as AddressInfo).port;
    await server.api('POST', '/v1/api_keys', { name: 'Home Assistant', scopes: ['nutrition:read', 'digestion:read'] });
    const sub = await server.api<{ id: string }>('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/api/webhook/chyme`, events: ['meal.created', 'digestion.state_changed'] });
    await server.api('POST', `/v1/webhooks/${sub.body.id}/test`);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await new Promise((r) => (hook ? hook.close(r) : r(undefined)));
  });

  async function shoot(page: Page, name: string, theme: string): Promise<void> {
    // Let charts settle (ResizeObserver, fonts) before the picture, taken from the top.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(dir, `${name}-${theme}.png`), fullPage: true });
    const found = await axe(page);
    if (found.length) violations.push({ where: `${name} (${theme})`, list: found });
  }

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: screenshots and accessibility of every screen`, async () => {
      const { page, context, problems } = await openApp(browser, server, { colorScheme: theme });
      try {
        for (const s of SCREENS) {
          await page.goto(`${server.url}/${s.hash}`);
          await page.waitForSelector(s.ready, { timeout: 20_000 });
          if (s.name === 'integrations') {
            // Show the webhook's deliveries and their attempts too.
            await page.getByTestId('webhook-row').first().getByRole('button', { name: 'Deliveries' }).click();
            await page.waitForSelector('[data-testid="delivery-row"]');
          }
          await shoot(page, s.name, theme);
        }
        // The meal form with an API error shown inline.
        await page.goto(`${server.url}/#/log`);
        const form = page.getByTestId('meal-form');
        await form.getByLabel('Description').fill('Feast');
        await form.getByLabel('Calories (kcal)').fill('20000');
        await form.getByRole('button', { name: 'Log meal' }).click();
        await form.locator('.field__error').first().waitFor();
        await form.screenshot({ path: join(dir, `log-meal-error-${theme}.png`) });
        const unexpected = problems.filter((p) => !/status of 400/.test(p));
        assert.deepEqual(unexpected, [], 'no console errors or CSP violations');
      } finally {
        await context.close();
      }
    });
  }

  test('deliveries expanded, and a narrow window', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'light', viewport: { width: 420, height: 900 } });
    try {
      await page.goto(`${server.url}/#/today`);
      await page.waitForSelector('[data-testid="dial-state"]');
      await shoot(page, 'today-narrow', 'light');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${server.url}/#/integrations`);
      const row = page.getByTestId('webhook-row').first();
      await row.getByRole('button', { name: 'Deliveries' }).click();
      await row.getByTestId('delivery-row').first().waitFor();
      await row.screenshot({ path: join(dir, 'webhook-deliveries-light.png') });
    } finally {
      await context.close();
    }
  });

  test('the sign-in hint without a session', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ colorScheme: theme, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      await page.getByRole('heading', { name: 'Open Chyme from its link' }).waitFor();
      await shoot(page, 'sign-in', theme);
      await context.close();
    }
  });

  test('keyboard: skip link, navigation and theme toggle', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.waitForSelector('[data-testid="dial-state"]');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent), 'Skip to content');
      // Tab to "Log meal" in the navigation and open it with Enter.
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        const text = await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent);
        if (text === 'Log meal') break;
      }
      await page.keyboard.press('Enter');
      await page.waitForSelector('[data-testid="meal-form"]');
      // The theme toggle cycles system → light → dark and sticks across reloads.
      const toggle = page.getByTestId('theme-toggle');
      await toggle.click();
      await toggle.click();
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.theme), 'dark');
      await page.reload();
      await page.waitForSelector('[data-testid="meal-form"]');
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.theme), 'dark');
      await shoot(page, 'log-meal-toggled', 'dark');
    } finally {
      await context.close();
    }
  });

  test('axe: no serious or critical violations on any screen', () => {
    assert.equal(violations.length, 0, violations.map((v) => `${v.where}:\n${formatViolations(v.list)}`).join('\n\n'));
  });
});
