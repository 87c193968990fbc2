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
/** Pages for each kind of trend switch (cold and prefetched). */
const TREND_RUNS = Number(process.env.BENCH_UI_TREND_RUNS ?? 5);
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

async function openScore(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/#/score`);
  await page.waitForSelector('[data-testid="trend-chart"][data-days="30"] .recharts-area-curve');
}

/** The service's day `n` days before today (the bench's server runs in UTC). */
function dayBefore(n: number): string {
  return new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Clicks a trend range in the page and times it there, from the click to the first frame painted
 * after the chart's last change: the chart must show `points` days and its drawing must have been
 * still for 300 ms (recharts lays the chart out over more than one frame). A string, so the
 * bundler's helpers stay out of the page.
 */
async function switchTrend(page: Page, label: string, points: number): Promise<number> {
  return page.evaluate(`new Promise((resolve, reject) => {
    const input = [...document.querySelectorAll('[data-testid="score"] input[type=radio]')].find((i) => i.parentElement.textContent.trim() === ${JSON.stringify(label)});
    if (!input) return reject(new Error('no range ' + ${JSON.stringify(label)}));
    let lastChange = 0;
    let paintedAfter = 0;
    const observer = new MutationObserver(() => {
      const changedAt = performance.now();
      lastChange = changedAt;
      // rAF runs before the frame's paint; a message posted from it runs after that paint.
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => { if (changedAt === lastChange) paintedAfter = performance.now(); };
        ch.port2.postMessage(0);
      });
    });
    observer.observe(document.querySelector('[data-testid="score"]'), { subtree: true, childList: true, attributes: true, characterData: true });
    const t0 = performance.now();
    input.click();
    const started = Date.now();
    const poll = () => {
      const fig = document.querySelector('[data-testid="trend-chart"]');
      const drawn = fig && fig.dataset.points === '${points}' && fig.querySelector('.recharts-area-curve');
      if (drawn && paintedAfter > lastChange && performance.now() - lastChange > 300) {
        observer.disconnect();
        return resolve(paintedAfter - t0);
      }
      if (Date.now() - started > 15000) { observer.disconnect(); return reject(new Error('the trend did not settle')); }
      setTimeout(poll, 50);
    };
    poll();
  })`);
}

/** How long the page's last daily-scores request took (server and network), from its own timing. */
async function lastScoresRequestMs(page: Page): Promise<number> {
  return page.evaluate(() => {
    const entries = (globalThis as unknown as G).performance.getEntriesByType('resource').filter((r) => r.name.includes('/v1/digestion/scores/daily'));
    const last = entries[entries.length - 1];
    return last ? last.responseEnd - last.startTime : NaN;
  });
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

  // The 90-day trend switch, two ways, each on a new page: "cold", clicked as soon as the screen
  // shows its 30 days (the 90-day request is part of the switch), and "prefetched", clicked once
  // the screen has loaded the 90 days ahead while idle (the switch only draws).
  const cold: number[] = [];
  const coldFetch: number[] = [];
  const prefetched: number[] = [];
  for (let i = 0; i < TREND_RUNS; i++) {
    const c = await openApp(browser, server);
    await openScore(c.page, server.url);
    cold.push(await switchTrend(c.page, '90 days', 90));
    coldFetch.push(await lastScoresRequestMs(c.page));
    await c.context.close();

    const p = await openApp(browser, server);
    const ahead = p.page.waitForResponse((r) => r.url().includes('/v1/digestion/scores/daily') && r.url().includes(`start_date=${dayBefore(89)}`));
    await openScore(p.page, server.url);
    await ahead;
    await p.page.waitForTimeout(300); // the prefetched answer arrives while the 30 days stay drawn
    prefetched.push(await switchTrend(p.page, '90 days', 90));
    await p.context.close();
  }

  const { page, context } = await openApp(browser, server);
  await openScore(page, server.url);
  await switchTrend(page, '90 days', 90);
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
    row('Gut score: switch the trend to 90 days, cold (request included)', median(cold)),
    row('  of which the scores request (90 days)', median(coldFetch)),
    row('Gut score: switch the trend to 90 days, prefetched (drawing only)', median(prefetched)),
    row('Timeline: open the week view', weekMs),
    '',
    `Hovering the 90-day trend: ${trendSweep.frames} frames, mean ${trendSweep.meanFrameMs} ms, worst ${trendSweep.worstFrameMs} ms.`,
    `All first-render runs (ms): ${today.map((r) => Math.round(r.firstRenderMs)).join(', ')}.`,
    `All trend switches (ms), cold: ${cold.map(Math.round).join(', ')}; prefetched: ${prefetched.map(Math.round).join(', ')}.`,
  ].join('\n');
  console.log(report);
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'ui.md'), `${report}\n`);
} finally {
  await browser.close();
  await server.stop();
}
