/**
 * UI performance (issue 5 §9): the built renderer's JavaScript under 400 KB gzipped; the first
 * render of Today under 1 s with a year of data; the 90-day charts drawn quickly and smooth to
 * interact with. Figures go to test-results/perf.json (and docs/performance.md by hand).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { history, launchBrowser, openApp, resultsDir, ROOT, seed, skipReason, startServer, type Server } from './harness.js';

const JS_BUDGET_BYTES = 400 * 1024;
const FIRST_RENDER_BUDGET_MS = 1000;
const RUNS = 5;

const figures: Record<string, unknown> = {};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Page-side helpers, typed without the DOM library. */
type Entry = { name: string; startTime: number; duration: number; responseEnd: number };
type G = {
  performance: { getEntriesByName(name: string): Entry[]; getEntriesByType(type: string): Entry[] };
  document: { querySelectorAll(s: string): { length: number } };
};

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
    figures.bundle = { chunks, totalGzipBytes: total, initialGzipBytes: initial, cssGzipBytes: css };
    assert.ok(total < JS_BUDGET_BYTES, `all JS gzipped: ${total} bytes`);
  });
});

describe('first render with a year of data', { skip: skipReason() ?? false }, () => {
  let server: Server;
  let browser: Browser;

  before(async () => {
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
    const data = history(365, Date.now(), 11);
    const t0 = performance.now();
    await seed(server, data);
    figures.seed = { meals: data.meals.length, sleepSessions: data.sleep.length, seconds: Math.round((performance.now() - t0) / 100) / 10 };
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    const out = join(resultsDir(), 'perf.json');
    writeFileSync(out, JSON.stringify(figures, null, 2));
    console.log(`performance figures written to ${out}`);
  });

  test('Today renders in under 1 s (median of 5 cold loads)', async () => {
    const { context } = await openApp(browser, server); // signs in once; later contexts reuse the session
    await context.close();
    const runs: { firstRenderMs: number; snapshotMs: number; fcpMs: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      // A new context each run: empty HTTP cache, so every run loads the bundle afresh.
      const { page, context: ctx } = await openApp(browser, server);
      try {
        await page.waitForSelector('[data-testid="today"] [data-testid="dial-state"]', { timeout: 10_000 });
        const t = await page.evaluate(() => {
          const p = (globalThis as unknown as G).performance;
          const mark = p.getEntriesByName('chyme:today-rendered')[0];
          // The snapshot request as the browser timed it (it starts before React, at boot).
          const snap = p.getEntriesByType('resource').find((r) => r.name.includes('/v1/snapshot'));
          const fcp = p.getEntriesByName('first-contentful-paint')[0];
          return { firstRenderMs: mark?.startTime ?? NaN, snapshotMs: snap ? snap.responseEnd - snap.startTime : NaN, fcpMs: fcp?.startTime ?? NaN };
        });
        runs.push(t);
      } finally {
        await ctx.close();
      }
    }
    const rounded = runs.map((r) => ({ firstRenderMs: Math.round(r.firstRenderMs), snapshotMs: Math.round(r.snapshotMs), fcpMs: Math.round(r.fcpMs) }));
    figures.today = {
      runs: rounded,
      medianFirstRenderMs: median(rounded.map((r) => r.firstRenderMs)),
      maxFirstRenderMs: Math.max(...rounded.map((r) => r.firstRenderMs)),
      medianSnapshotMs: median(rounded.map((r) => r.snapshotMs)),
    };
    // The median of 5 cold loads: `npm test` runs two test files at once on small CI machines, so
    // a single run can be slowed by the neighbour; every run is reported in perf.json.
    const med = median(rounded.map((r) => r.firstRenderMs));
    assert.ok(med < FIRST_RENDER_BUDGET_MS, `median first render of Today: ${med} ms (runs: ${rounded.map((r) => r.firstRenderMs).join(', ')})`);
  });

  /** Frames while the pointer sweeps across a chart for about a second. */
  async function sweep(page: Page, selector: string): Promise<{ frames: number; meanFrameMs: number; worstFrameMs: number }> {
    const box = (await page.locator(selector).boundingBox())!;
    // A string, so the bundler's helpers (tsx names inner functions) stay out of the page.
    await page.evaluate(`(() => {
      window.__frames = [];
      const tick = (t) => { window.__frames.push(t); if (window.__frames.length < 400) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
    })()`);
    for (let i = 0; i <= 60; i++) await page.mouse.move(box.x + (box.width * i) / 60, box.y + box.height / 2);
    const frames = await page.evaluate(() => (globalThis as unknown as { __frames: number[] }).__frames);
    const gaps = frames.slice(1).map((t, i) => t - frames[i]!);
    return { frames: frames.length, meanFrameMs: Math.round((gaps.reduce((a, b) => a + b, 0) / gaps.length) * 10) / 10, worstFrameMs: Math.round(Math.max(...gaps)) };
  }

  test('the 90-day score trend and the week timeline draw quickly and stay smooth', async () => {
    const { page, context } = await openApp(browser, server);
    try {
      await page.goto(`${server.url}/#/score`);
      await page.waitForSelector('[data-testid="trend-chart"] .recharts-area-curve');
      const t0 = Date.now();
      await page.getByRole('radio', { name: '90 days' }).check();
      await page.waitForFunction(() => (globalThis as unknown as G).document.querySelectorAll('[data-testid="trend-chart"] .trend-dot').length === 0);
      await page.waitForSelector('[data-testid="trend-chart"] .recharts-area-curve');
      const trend90Ms = Date.now() - t0;
      const trendSweep = await sweep(page, '[data-testid="trend-chart"] .chart__box');

      const t1 = Date.now();
      await page.goto(`${server.url}/#/timeline?view=week`);
      await page.waitForSelector('[data-testid="timeline-week"] .phase--fed');
      const weekMs = Date.now() - t1;
      figures.charts = { trend90DaysSwitchMs: trend90Ms, trendSweep, timelineWeekLoadMs: weekMs };
      assert.ok(trend90Ms < 2000, `90-day trend took ${trend90Ms} ms`);
      assert.ok(trendSweep.worstFrameMs < 250, `worst frame while hovering the 90-day chart: ${trendSweep.worstFrameMs} ms`);
    } finally {
      await context.close();
    }
  });
});
