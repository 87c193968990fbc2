/**
 * Deterministic screenshots of every screen, light and dark, for comparing two builds of the
 * renderer pixel by pixel (used when restyling without meaning to change a pixel). Not a test: run
 *
 *   node --import tsx test/e2e/shoot.ts <out-dir>          # shoots build/renderer into out-dir
 *   node --import tsx test/e2e/shoot.ts --compare <a> <b>   # counts differing pixels, writes diffs
 *
 * The service runs on a test clock that is set back to 13:10 UTC before every screen, and the
 * page's clock is frozen at the same instant, so times, "in 2 h" labels and charts do not drift
 * between runs. What still varies run to run (the port, key prefixes, a webhook's measured delivery time) is
 * masked.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { history, iso, launchBrowser, openApp, SCREENS, seed, startServer, todayUtcAt } from './harness.js';


async function shootAll(out: string): Promise<void> {
  mkdirSync(out, { recursive: true });
  const midnight = todayUtcAt(0);
  const nowMs = midnight + (13 * 60 + 10) * 60_000;
  const server = await startServer({ clockMs: nowMs, tz: 'UTC' });
  const hook = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const browser = await launchBrowser();
  try {
    await seed(server, history(40, nowMs));
    for (const m of [
      { minute: 7 * 60 + 40, meal_type: 'breakfast', description: 'Porridge with banana and honey', foods: [{ name: 'Oats', calories: 300 }], macros: { protein_g: 12, carbs_g: 82, fat_g: 7, fiber_g: 8 } },
      { minute: 12 * 60 + 35, meal_type: 'lunch', description: 'Lentil soup and rye bread', foods: [{ name: 'Lentil soup', calories: 330 }, { name: 'Rye bread', calories: 160 }], macros: { protein_g: 24, carbs_g: 70, fat_g: 9, fiber_g: 16 } },
    ]) {
      const { minute, ...body } = m;
      await server.api('POST', '/v1/nutrition/meals', { ...body, timestamp: iso(midnight + minute * 60_000) });
    }
    const port = (hook.address() as AddressInfo).port;
    await server.api('POST', '/v1/api_keys', { name: 'Home Assistant', scopes: ['nutrition:read', 'digestion:read'] });
    const sub = await server.api<{ id: string }>('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/api/webhook/chyme`, events: ['meal.created', 'digestion.state_changed'] });
    await server.api('POST', `/v1/webhooks/${sub.body.id}/test`);

    const shoot = async (page: Page, name: string) => {
      await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, `${name}.png`), fullPage: true, mask: [
          // Run-to-run: times of use, the port, key prefixes.
          page.locator('[data-testid="api-keys"] .row__meta.small'),
          page.locator('[data-testid="base-url"]'),
          page.locator('pre.code'),
          page.locator('.row__title code'),
        ], });
    };
    let rewinds = 0;
    for (const theme of ['light', 'dark'] as const) {
      for (const viewport of [{ width: 1280, height: 860 }, { width: 420, height: 900 }]) {
        const { page, context } = await openApp(browser, server, { colorScheme: theme, viewport });
        await context.clock.setFixedTime(nowMs);
        const narrow = viewport.width < 600 ? '-narrow' : '';
        for (const s of SCREENS) {
          // The service re-reads its clock file only when the text changes: alternate by 1 ms.
          server.setClock(nowMs + (++rewinds % 2));
          await page.goto(`${server.url}/${s.hash}`);
          await page.reload();
          await page.waitForSelector(s.ready, { timeout: 20_000 });
          if (s.name === 'integrations') {
            await page.getByTestId('webhook-row').first().getByRole('button', { name: 'Deliveries' }).click();
            await page.waitForSelector('[data-testid="delivery-row"]');
            // An attempt's measured duration changes the column widths from run to run: fix its text.
            await page.evaluate(() => {
              const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ textContent: string }> } }).document;
              for (const li of doc.querySelectorAll('.attempts li')) li.textContent = '#1 HTTP 200 · 5 ms · 13:10';
            });
          }
          // The live badge says "Connecting" until the event stream opens.
          await page.waitForSelector('.live--open');
          await shoot(page, `${s.name}${narrow}-${theme}`);
        }
        await context.close();
      }
      const context = await browser.newContext({ colorScheme: theme, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      await page.getByRole('heading', { name: 'Open Chyme from its link' }).waitFor();
      await shoot(page, `sign-in-${theme}`);
      await context.close();
    }
  } finally {
    await browser.close();
    await server.stop();
    hook.close();
  }
}

/** Runs in the page: decodes two PNGs (base64) and paints the pixels that differ red. */
const COMPARE_IN_PAGE = `async function ([srcA, srcB]) {
          const load = async (src) => {
            const img = new Image();
            img.src = \`data:image/png;base64,\${src}\`;
            await img.decode();
            const c = document.createElement('canvas');
            c.width = img.width;
            c.height = img.height;
            const ctx = c.getContext('2d');
            ctx.drawImage(img, 0, 0);
            return { c, data: ctx.getImageData(0, 0, img.width, img.height) };
          };
          const [x, y] = await Promise.all([load(srcA), load(srcB)]);
          if (x.c.width !== y.c.width || x.c.height !== y.c.height) return { size: \`\${x.c.width}×\${x.c.height} vs \${y.c.width}×\${y.c.height}\`, diff: -1, png: '' };
          let diff = 0;
          const d = x.c.getContext('2d').createImageData(x.c.width, x.c.height);
          for (let i = 0; i < x.data.data.length; i += 4) {
            const same = x.data.data[i] === y.data.data[i] && x.data.data[i + 1] === y.data.data[i + 1] && x.data.data[i + 2] === y.data.data[i + 2];
            d.data[i] = same ? x.data.data[i] / 3 : 255;
            d.data[i + 1] = same ? x.data.data[i + 1] / 3 : 0;
            d.data[i + 2] = same ? x.data.data[i + 2] / 3 : 0;
            d.data[i + 3] = 255;
            if (!same) diff++;
          }
          x.c.getContext('2d').putImageData(d, 0, 0);
          return { size: '', diff, png: diff ? x.c.toDataURL('image/png').split(',')[1] : '' };
        }`;

/** Compares same-named PNGs in two folders in the browser (canvas), writing a diff image for each that differs. */
async function compare(a: string, b: string): Promise<number> {
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  let differing = 0;
  try {
    for (const name of readdirSync(a).filter((f) => f.endsWith('.png') && !f.endsWith('.diff.png')).sort()) {
      const dataA = readFileSync(join(a, name)).toString('base64');
      let dataB: string;
      try {
        dataB = readFileSync(join(b, name)).toString('base64');
      } catch {
        console.log(`MISSING ${name} in ${b}`);
        differing++;
        continue;
      }
      // Passed as source text: tsx would wrap named functions in a helper the page does not have.
      const result = (await page.evaluate(`(${COMPARE_IN_PAGE})(${JSON.stringify([dataA, dataB])})`)) as { size: string; diff: number; png: string };
      if (result.diff === 0) continue;
      differing++;
      console.log(`DIFF ${name}: ${result.diff === -1 ? `size ${result.size}` : `${result.diff} pixels`}`);
      if (result.png) writeFileSync(join(b, `${name.replace(/\.png$/, '')}.diff.png`), Buffer.from(result.png, 'base64'));
    }
  } finally {
    await browser.close();
  }
  console.log(differing ? `${differing} screenshots differ` : 'all screenshots pixel-identical');
  return differing;
}

const args = process.argv.slice(2);
if (args[0] === '--compare') process.exitCode = (await compare(resolve(args[1]!), resolve(args[2]!))) ? 1 : 0;
else await shootAll(resolve(args[0] ?? 'test-results/shots'));
