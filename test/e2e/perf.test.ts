/**
 * UI size and scale (issue 5 §9): the built renderer's JavaScript stays under 400 KB gzipped (a
 * deterministic budget), and a year of data renders on every screen. Timings are measured by
 * `npm run bench` (bench/ui.ts), never asserted here.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { choose, history, launchBrowser, openApp, ROOT, seed, skipReason, startServer, type Server } from './harness.js';

const JS_BUDGET_BYTES = 400 * 1024;

describe('renderer size', () => {
  test('the built JavaScript is under 400 KB gzipped', { skip: skipReason() ?? false }, () => {
    const dir = join(ROOT, 'build/renderer/assets');
    const html = readFileSync(join(ROOT, 'build/renderer/index.html'), 'utf8');
    const chunks = readdirSync(dir)
      .filter((f) => f.endsWith('.js'))
      .map((f) => {
        const raw = readFileSync(join(dir, f));
        return { file: f, bytes: raw.length, gzip: gzipSync(raw).length, initial: html.includes(f) };
      });
    const total = chunks.reduce((s, c) => s + c.gzip, 0);
    const initial = chunks.filter((c) => c.initial).reduce((s, c) => s + c.gzip, 0);
    const css = readdirSync(dir).filter((f) => f.endsWith('.css')).reduce((s, f) => s + gzipSync(readFileSync(join(dir, f))).length, 0);
    assert.ok(total < JS_BUDGET_BYTES, `all JS gzipped: ${total} bytes (${initial} at start, CSS ${css}): ${JSON.stringify(chunks)}`);
  });
});

describe('a year of data', { skip: skipReason() ?? false }, () => {
  let server: Server;
  let browser: Browser;

  before(async () => {
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
    await seed(server, history(365, Date.now(), 11));
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  // How fast: `npm run bench` (bench/ui.ts) measures it; tests assert no timings.
  test('Today, the 90-day trend and the week timeline render it', async () => {
    const { page, context, problems } = await openApp(browser, server);
    try {
      await page.waitForSelector('[data-testid="today"] [data-testid="dial-state"]', { timeout: 15_000 });
      await page.goto(`${server.url}/#/score`);
      await choose(page.getByRole('radio', { name: '90 days' }));
      await page.waitForSelector('[data-testid="trend-chart"] .recharts-area-curve');
      await page.goto(`${server.url}/#/timeline?view=week`);
      await page.waitForSelector('[data-testid="timeline-week"] .phase--fed');
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
