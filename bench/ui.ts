/**
 * `npm run bench` (second part): the renderer in Debian's Chromium against `chyme serve` with ten
 * years of data imported through the API. Cold first render of Today, the 90-day trend switch, frame
 * times while hovering it, and the week timeline, each reported with its ratio to a baseline
 * measured in the same run: a cold navigation to a tiny static response from the same server.
 * Nothing here is asserted; the figures are written to bench/results/ui.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { history, launchBrowser, openApp, skipReason, startServer } from '../test/e2e/harness.js';

const RUNS = Number(process.env.BENCH_UI_RUNS ?? 7);
/** Ten years of history by default (BENCH_UI_DAYS changes it). */
const DAYS = Number(process.env.BENCH_UI_DAYS ?? 3650);

/** Writes a history in one request through the import endpoint (seconds, where POSTs took minutes). */
async function importHistory(server: Awaited<ReturnType<typeof startServer>>, data: ReturnType<typeof history>): Promise<void> {
  const doc = {
    format: 'chyme.export',
    format_version: 1,
    meals: data.meals.map((m, i) => ({ ...m, id: `meal_h${i}` })),
    sleep_sessions: data.sleep.map((s, i) => ({ ...s, id: `sleep_h${i}`, source: 'bench' })),
  };
  const r = await server.api('POST', '/v1/import', doc);
  if (r.status !== 200 && r.status !== 201) throw new Error(`import failed: ${r.status} ${JSON.stringify(r.body)}`);
}

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

const reason = skipReason();
if (reason) {
  console.log(`UI benchmark skipped: ${reason}`);
  process.exit(0);
}

const server = await startServer({ tz: 'UTC' });
const browser = await launchBrowser();
try {
  const data = history(DAYS, Date.now(), 11);
  const seedStart = Date.now();
  await importHistory(server, data);
  const seedMs = Date.now() - seedStart;

  const { context: first } = await openApp(browser, server); // signs in once; later contexts reuse the session
  await first.close();

  const baseline: number[] = [];
  const today: Array<{ firstRenderMs: number; snapshotMs: number; fcpMs: number }> = [];
  for (let i = 0; i < RUNS; i++) {
    // A new context each run: an empty HTTP cache, so every load is cold.
    const b = await openApp(browser, server);
    const t0 = Date.now();
    await b.page.goto(`${server.url}/v1/health`);
    baseline.push(Date.now() - t0);
    await b.context.close();

    const { page, context } = await openApp(browser, server);
    await page.waitForSelector('[data-testid="today"] [data-testid="dial-state"]', { timeout: 10_000 });
    today.push(
      await page.evaluate(() => {
        const p = (globalThis as unknown as G).performance;
        const mark = p.getEntriesByName('chyme:today-rendered')[0];
        const snap = p.getEntriesByType('resource').find((r) => r.name.includes('/v1/snapshot'));
        const fcp = p.getEntriesByName('first-contentful-paint')[0];
        return { firstRenderMs: mark?.startTime ?? NaN, snapshotMs: snap ? snap.responseEnd - snap.startTime : NaN, fcpMs: fcp?.startTime ?? NaN };
      }),
    );
    await context.close();
  }

  const { page, context } = await openApp(browser, server);
  await page.goto(`${server.url}/#/score`);
  await page.waitForSelector('[data-testid="trend-chart"] .recharts-area-curve');
  const t0 = Date.now();
  await page.getByRole('radio', { name: '90 days' }).check();
  await page.waitForFunction(() => (globalThis as unknown as G).document.querySelectorAll('[data-testid="trend-chart"] .trend-dot').length === 0);
  await page.waitForSelector('[data-testid="trend-chart"] .recharts-area-curve');
  const trend90Ms = Date.now() - t0;
  // How much of the switch is the request (server and network) rather than drawing.
  const trend90FetchMs = await page.evaluate(() => {
    const entries = (globalThis as unknown as G).performance.getEntriesByType('resource').filter((r) => r.name.includes('/v1/digestion/scores/daily'));
    const last = entries[entries.length - 1];
    return last ? last.responseEnd - last.startTime : NaN;
  });
  const trendSweep = await sweep(page, '[data-testid="trend-chart"] .chart__box');
  const t1 = Date.now();
  await page.goto(`${server.url}/#/timeline?view=week`);
  await page.waitForSelector('[data-testid="timeline-week"] .phase--fed');
  const weekMs = Date.now() - t1;
  await context.close();

  const base = median(baseline);
  const row = (name: string, ms: number) => `| ${name} | ${Math.round(ms)} | ${(ms / base).toFixed(1)} |`;
  const report = [
    `Chyme UI benchmark — ${new Date().toISOString()} — Chromium, ${RUNS} cold loads (median); ${DAYS} days of data: ${data.meals.length} meals, ${data.sleep.length} nights (imported in ${(seedMs / 1000).toFixed(1)} s)`,
    '',
    '| measure | ms | × baseline |',
    '| --- | ---: | ---: |',
    row('baseline: cold navigation to GET /v1/health', base),
    row('Today: first contentful paint', median(today.map((r) => r.fcpMs))),
    row('Today: rendered with live data (snapshot included)', median(today.map((r) => r.firstRenderMs))),
    row('  of which the snapshot request (days=7)', median(today.map((r) => r.snapshotMs))),
    row('Gut score: switch the trend to 90 days', trend90Ms),
    row('  of which the scores request (90 days)', trend90FetchMs),
    row('Timeline: open the week view', weekMs),
    '',
    `Hovering the 90-day trend: ${trendSweep.frames} frames, mean ${trendSweep.meanFrameMs} ms, worst ${trendSweep.worstFrameMs} ms.`,
    `All first-render runs (ms): ${today.map((r) => Math.round(r.firstRenderMs)).join(', ')}.`,
  ].join('\n');
  console.log(report);
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'ui.md'), `${report}\n`);
} finally {
  await browser.close();
  await server.stop();
}
