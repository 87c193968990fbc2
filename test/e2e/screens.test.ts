/**
 * Every screen, light and dark: a screenshot of each under test-results/screens/, an axe-core
 * check of each (no violation of WCAG 2.2 AA or axe's best practices), each fitting a 390 px phone window (no
 * sideways scroll, nothing cut off), keyboard reachability of the navigation and the theme toggle. The service runs on a test clock at 13:10 UTC today with 40 days of history.
 */
import assert from 'node:assert/strict';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { choose, axe, formatViolations, history, iso, launchBrowser, openApp, resultsDir, SCREENS, seed, skipReason, startServer, todayUtcAt, type AxeViolation, type Server } from './harness.js';

const skip = skipReason();

/**
 * Runs in the page: how wide the document is, and every visible element that reaches outside the
 * window, is cut off by an ancestor that hides its overflow (a card), or whose content spills out
 * of its own box, each as `tag.class "text"` and where. (The page's globals, typed here without
 * the DOM library.)
 */
function phoneFit(): { scrollWidth: number; innerWidth: number; cut: string[] } {
  type Box = { left: number; right: number; width: number; height: number };
  type El = { tagName: string; className: unknown; textContent: string | null; parentElement: El | null; scrollWidth: number; clientWidth: number; getBoundingClientRect(): Box; closest(s: string): El | null };
  const g = globalThis as unknown as {
    innerWidth: number;
    document: { documentElement: { scrollWidth: number }; body: El; querySelectorAll(s: string): Iterable<El> };
    getComputedStyle(el: El): { display: string; visibility: string; overflowX: string };
  };
  const vw = g.innerWidth;
  const cut: string[] = [];
  const seen = new Set<El>();
  for (const el of g.document.querySelectorAll('.shell *, .toaster *')) {
    if (el.closest('.visually-hidden, .skip-link')) continue;
    const st = g.getComputedStyle(el);
    if (st.display === 'none' || st.visibility === 'hidden' || st.display === 'contents') continue;
    const r = el.getBoundingClientRect();
    // Hidden for the eye but kept for screen readers (clipped to a pixel), or not drawn at all.
    if (r.width <= 1 || r.height <= 1) continue;
    // Its content spills out of its own box (a word wider than a squeezed column runs over the
    // buttons beside it).
    // (SVG drawings are placed by coordinates, and checked as boxes below.)
    if (st.overflowX === 'visible' && !el.closest('svg') && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
      const classes = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '';
      cut.push(`${el.tagName.toLowerCase()}${classes} "${(el.textContent ?? '').trim().slice(0, 30)}" spills: ${el.scrollWidth} px of content in ${el.clientWidth} px`);
    }
    let outside = r.left < -0.5 || r.right > vw + 0.5;
    // Cut off by an ancestor that clips (overflow hidden or a scrolling box): the part beyond it is unseen.
    for (let a = el.parentElement; a && a !== g.document.body && !outside; a = a.parentElement) {
      const ox = g.getComputedStyle(a).overflowX;
      if (ox === 'visible') continue;
      const ar = a.getBoundingClientRect();
      if (r.left < ar.left - 0.5 || r.right > ar.right + 0.5) outside = true;
    }
    if (!outside) continue;
    seen.add(el);
    // Only the outermost: its contents go with it.
    if (el.parentElement && seen.has(el.parentElement)) continue;
    // (No inner functions here: the test's compiler would wrap them in a helper the page lacks.)
    const classes = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\s+/).join('.') : '';
    cut.push(`${el.tagName.toLowerCase()}${classes} "${(el.textContent ?? '').trim().slice(0, 30)}" ${Math.round(r.left)}–${Math.round(r.right)}`);
  }
  return { scrollWidth: g.document.documentElement.scrollWidth, innerWidth: vw, cut };
}


describe('every screen, light and dark', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let hook: HttpServer;
  const dir = resultsDir('screens');
  const dayMs = 86_400_000;
  const midnight = todayUtcAt(0);
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

  /** Opens a main screen and waits until it is drawn; on Integrations, with a webhook's deliveries and attempts shown too. */
  async function showScreen(page: Page, s: (typeof SCREENS)[number]): Promise<void> {
    await page.goto(`${server.url}/${s.hash}`);
    await page.waitForSelector(s.ready, { timeout: 20_000 });
    if (s.name === 'integrations') {
      await page.getByTestId('webhook-row').first().getByRole('button', { name: 'Deliveries' }).click();
      await page.waitForSelector('[data-testid="delivery-row"]');
    }
  }

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: screenshots and accessibility of every screen`, async () => {
      const { page, context, problems } = await openApp(browser, server, { colorScheme: theme });
      try {
        for (const s of SCREENS) {
          await showScreen(page, s);
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

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: every screen fits a 390 px phone window: no sideways scroll, nothing cut off`, async () => {
      const { page, context, problems } = await openApp(browser, server, { colorScheme: theme, viewport: { width: 390, height: 844 } });
      const found: string[] = [];
      try {
        for (const s of SCREENS) {
          await showScreen(page, s);
          await page.waitForTimeout(300);
          await page.screenshot({ path: join(dir, `${s.name}-390-${theme}.png`), fullPage: true });
          // The phone layout passes axe too (the wide one is checked above).
          const axed = await axe(page);
          if (axed.length) violations.push({ where: `${s.name} at 390 px (${theme})`, list: axed });
          const fit = await page.evaluate(phoneFit);
          if (fit.scrollWidth > fit.innerWidth) found.push(`${s.name}: the page scrolls sideways (${fit.scrollWidth} px wide in ${fit.innerWidth} px)`);
          for (const c of fit.cut) found.push(`${s.name}: ${c}`);
        }
        assert.deepEqual(found, []);
        assert.deepEqual(problems, []);
      } finally {
        await context.close();
      }
    });
  }

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

  test('Today: during the day the card speaks of tonight, not of when lunch is digested', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.goto(`${server.url}/#/today`);
      // Lunch at 12:35 and the clock at 13:10, 40 logged nights: the latest time to finish eating
      // for the usual bedtime.
      const by = page.getByTestId('finish-eating-by');
      await by.waitFor();
      assert.match(await by.innerText(), /in \d+ h/);
      assert.match(await page.getByTestId('tonight-note').innerText(), /^For bed at .*, your usual bedtime from the nights you logged/);
    } finally {
      await context.close();
    }
  });

  test('Gut score: the 90-day axis labels are whole, and a day without meals reads "No data"', async () => {
    // Three days ago, nothing logged: that finished day becomes UNSCORABLE.
    const gap = new Date(midnight - 3 * dayMs).toISOString().slice(0, 10);
    const meals = await server.api<{ data: { id: string }[] }>('GET', `/v1/nutrition/meals?start_date=${gap}&end_date=${gap}&limit=100`);
    assert.ok(meals.body.data.length > 0);
    for (const m of meals.body.data) assert.ok((await server.api('DELETE', `/v1/nutrition/meals/${m.id}`)).status < 300);

    for (const theme of ['light', 'dark'] as const) {
      const { page, context } = await openApp(browser, server, { colorScheme: theme });
      try {
        await page.goto(`${server.url}/#/score`);
        await page.waitForSelector('[data-testid="trend-chart"] .recharts-surface');
        await choose(page.getByRole('radio', { name: '90 days' }));
        await page.waitForSelector('[data-testid="trend-chart"][data-days="90"][data-points="90"] .recharts-area-curve');
        await page.waitForTimeout(300);
        // Each y-axis label lies wholly inside the chart's drawing (a clipped "100" read ".00").
        const labels = await page.evaluate(() => {
          const doc = (globalThis as unknown as { document: { querySelector(s: string): { getBoundingClientRect(): { left: number } } | null; querySelectorAll(s: string): Iterable<{ textContent: string; getBoundingClientRect(): { left: number } }> } }).document;
          const svgLeft = doc.querySelector('[data-testid="trend-chart"] svg.recharts-surface')!.getBoundingClientRect().left;
          return [...doc.querySelectorAll('[data-testid="trend-chart"] .recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value')].map((t) => ({ text: t.textContent, inside: t.getBoundingClientRect().left >= svgLeft }));
        });
        assert.ok(labels.some((l) => l.text === '100'), JSON.stringify(labels));
        assert.deepEqual(labels.filter((l) => !l.inside), [], 'y-axis labels cut off at the left edge');
        await shoot(page, 'gut-score-90-days', theme);

        // Step back to the day without meals: no score, and no component claims to be helping.
        const card = page.locator('.card--score');
        for (let i = 0; i < 3; i++) await card.getByRole('button', { name: 'Previous day' }).click();
        await card.getByRole('heading', { name: new RegExp(new Date(midnight - 3 * dayMs).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', timeZone: 'UTC' })) }).waitFor();
        assert.match(await page.getByTestId('score-value').innerText(), /Unscorable/i);
        for (const name of ['overnight', 'fasted_ratio', 'regularity', 'circadian']) {
          const text = await page.getByTestId(`component-${name}`).innerText();
          assert.match(text, /No data/, `${name}: ${text}`);
          assert.doesNotMatch(text, /Helping|Pulling it down|Normal range/, `${name}: ${text}`);
          assert.match(text, /—/, `${name}: ${text}`);
        }
        await shoot(page, 'gut-score-unscorable-day', theme);
      } finally {
        await context.close();
      }
    }
  });

  test('Gut score: each trend range draws the service’s scores of its days, first to last, by keyboard too', async () => {
    const day = (n: number) => new Date(midnight - n * dayMs).toISOString().slice(0, 10);
    const longDay = (date: string) => new Date(`${date}T12:00:00Z`).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', timeZone: 'UTC' });
    const { page, context, problems } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.goto(`${server.url}/#/score`);
      await page.waitForSelector('[data-testid="trend-chart"][data-days="30"] .recharts-area-curve');
      // 90 → 7 → 30 → 90: widening asks the service, narrowing slices what the screen holds.
      for (const days of [90, 7, 30, 90]) {
        const radio = page.getByRole('radio', { name: `${days} days` });
        // Keyboard only: focus the current range and move with the arrow keys (native radios).
        await page.getByRole('radio', { checked: true }).focus();
        for (let i = 0; i < 3 && !(await radio.isChecked()); i++) await page.keyboard.press(days === 7 ? 'ArrowLeft' : 'ArrowRight');
        assert.ok(await radio.isChecked(), `${days} days chosen by keyboard`);
        const scores = await server.api<{ data: { date: string; score: number | null; score_state: string }[] }>(
          'GET',
          `/v1/digestion/scores/daily?start_date=${day(days - 1)}&end_date=${day(0)}`,
        );
        const expected = scores.body.data;
        assert.equal(expected.length, days);
        await page.waitForSelector(`[data-testid="trend-chart"][data-days="${days}"][data-points="${days}"] .recharts-area-curve`);
        // The plotting area spans the bands; its left and right edges are the first and last day.
        const plot = (await page.locator('[data-testid="trend-chart"] .band--optimal').first().boundingBox())!;
        for (const [x, want] of [
          [plot.x + 1, expected[0]!],
          [plot.x + plot.width - 1, expected[expected.length - 1]!],
        ] as const) {
          await page.mouse.move(x, plot.y + plot.height / 2);
          const tip = page.locator('[data-testid="trend-chart"] .chart-tip');
          await tip.filter({ hasText: longDay(want.date) }).waitFor({ timeout: 5_000 });
          const value = await tip.locator('span').first().innerText();
          const where = `${days} days, ${want.date}: ${await tip.innerText()}`;
          if (want.score === null) assert.equal(value, 'Unscorable', where);
          else assert.ok(value.startsWith(`${want.score} ·`), where);
          assert.equal(/Provisional/.test(await tip.innerText()), want.score_state === 'PENDING', where);
        }
        await page.mouse.move(0, 0);
      }
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });

  test('Gut score: the charts are named pictures, not focusable applications with empty titles', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.goto(`${server.url}/#/score`);
      await page.waitForSelector('[data-testid="trend-chart"] .recharts-surface');
      await page.waitForSelector('.chart--small .recharts-surface');
      const charts = await page.evaluate(() => {
        const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null; querySelector(s: string): { textContent: string } | null }> } }).document;
        return [...doc.querySelectorAll('svg.recharts-surface')].map((svg) => ({ role: svg.getAttribute('role'), tabindex: svg.getAttribute('tabindex'), title: svg.querySelector('title')?.textContent ?? '' }));
      });
      assert.equal(charts.length, 2, JSON.stringify(charts));
      for (const c of charts) {
        assert.equal(c.role, 'img', JSON.stringify(c));
        assert.equal(c.tabindex, null, `not in the Tab order: ${JSON.stringify(c)}`);
        assert.ok(c.title.trim(), `a title: ${JSON.stringify(c)}`);
      }
      await page.getByRole('img', { name: 'Gut score, the last 30 days' }).waitFor();
      await page.getByRole('img', { name: 'Overnight scores, the last 30 nights' }).waitFor();
    } finally {
      await context.close();
    }
  });

  test('axe: no violation on any screen', () => {
    assert.equal(violations.length, 0, violations.map((v) => `${v.where}:\n${formatViolations(v.list)}`).join('\n\n'));
  });
});
