/**
 * The Import screen against a real `chyme serve` and Chromium: drop files, read the dry-run
 * preview, pick a zone, confirm, see the meals through the API, undo (keeping an edited meal);
 * the same by keyboard alone; the server's sentences on refused files; upload progress on a big
 * file; axe-core and screenshots in light and dark (test-results/import/).
 * The files are the synthetic exports of test/imports/fixtures.ts; the person lives in Europe/Berlin.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import * as fx from '../imports/fixtures.js';
import { zipOf } from '../imports/zip.js';
import { axe, formatViolations, launchBrowser, openApp, resultsDir, skipReason, startServer, type Server } from './harness.js';

const skip = skipReason();

interface ImportBody {
  id: string | null;
  source: string;
  meals_added: number;
  sleep_added: number;
  duplicates_skipped: number;
  warnings: { file: string; line: number | null; message: string }[];
  timezone: string;
}
interface ErrorBody {
  error: { message: string };
}

/** The same upload the screen makes, straight to the API (to compare what the screen shows). */
async function apiUpload<T>(server: Server, files: { name: string; data: string | Buffer }[], fields: Record<string, string>): Promise<{ status: number; body: T }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append('file', new Blob([typeof f.data === 'string' ? f.data : new Uint8Array(f.data)]), f.name);
  const res = await fetch(`${server.url}/v1/imports`, { method: 'POST', headers: { Authorization: `Bearer ${server.key}` }, body: form });
  return { status: res.status, body: (await res.json()) as T };
}

/** Drops files on the drop zone as a person dragging them from the file manager would. */
async function dropFiles(page: Page, files: { name: string; text: string }[]): Promise<void> {
  const transfer = await page.evaluateHandle(`(() => {
    const t = new DataTransfer();
    for (const f of ${JSON.stringify(files)}) t.items.add(new File([f.text], f.name));
    return t;
  })()`);
  const zone = page.getByTestId('dropzone');
  await zone.dispatchEvent('dragenter', { dataTransfer: transfer });
  await zone.dispatchEvent('drop', { dataTransfer: transfer });
}

type Doc = { document: { activeElement: { textContent: string | null; getAttribute(n: string): string | null; tagName: string } | null } };

/** The accessible name of the focused element (its aria-label, else its text). */
const focusedName = (page: Page) =>
  page.evaluate(() => {
    const el = (globalThis as unknown as Doc).document.activeElement;
    return el ? `${el.tagName}:${el.getAttribute('aria-label') ?? el.textContent?.trim() ?? ''}` : '';
  });

/** Presses Tab until the focused element's name matches (keyboard only, as a person would). */
async function tabTo(page: Page, name: RegExp, max = 60): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const now = await focusedName(page);
    if (name.test(now)) return;
    seen.push(now);
  }
  assert.fail(`Tab never reached ${name}; went through ${seen.join(' | ')}`);
}

describe('Import screen', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('import');

  before(async () => {
    server = await startServer({ tz: 'Europe/Berlin' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function openImport(theme: 'light' | 'dark' = 'light') {
    const app = await openApp(browser, server, { colorScheme: theme });
    await app.page.goto(`${server.url}/#/import`);
    await app.page.getByTestId('past-imports').waitFor();
    return app;
  }

  test('drop → preview → another zone → confirm → the meals are in the API → undo keeps the edited one', async () => {
    const { page, context, problems } = await openImport();
    try {
      await page.getByText('No imports yet.').waitFor();
      const servings = fx.cronometerWideServings();
      const expected = await apiUpload<ImportBody>(server, [{ name: 'servings.csv', data: servings }], { dry_run: 'true' });
      assert.equal(expected.status, 200);
      assert.ok(expected.body.warnings.length > 0 && expected.body.meals_added > 0);

      await dropFiles(page, [{ name: 'servings.csv', text: servings }]);
      const preview = page.getByTestId('import-preview');
      await preview.getByRole('heading', { name: 'Preview: Cronometer' }).waitFor();
      const facts = await preview.getByTestId('preview-facts').innerText();
      assert.match(facts, new RegExp(`Meals to add\\s+${expected.body.meals_added}\\b`, 'i'));
      assert.match(facts, new RegExp(`Already here \\(skipped\\)\\s+${expected.body.duplicates_skipped}\\b`, 'i'));
      assert.match(facts, /Days\s+Mon 1 Jun – Tue 2 Jun 2026/i);
      // Each warning with its file and line, in the service's words.
      const warnings = await preview.getByTestId('warnings').innerText();
      for (const w of expected.body.warnings) {
        assert.ok(warnings.includes(`${w.file}${w.line === null ? '' : `, line ${w.line}`}`), warnings);
        assert.ok(warnings.includes(w.message), warnings);
      }
      assert.ok((await preview.getByTestId('samples').locator('tbody tr').count()) > 0, 'sample rows shown');
      // Cronometer writes no zone: the one assumed is the person's, and can be changed.
      const zone = preview.getByLabel('Time zone of these files');
      assert.equal(await zone.inputValue(), 'Europe/Berlin');
      const rerun = page.waitForResponse((r) => r.url().includes('/v1/imports') && r.request().method() === 'POST');
      await zone.focus();
      await zone.selectOption('America/New_York');
      assert.equal((await (await rerun).json()).timezone, 'America/New_York', 'the preview ran again in the chosen zone');
      await page.waitForFunction(() => !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('[data-testid="import-progress"]'));
      assert.equal(await zone.inputValue(), 'America/New_York');
      assert.match(await focusedName(page), /^SELECT:/, 'focus stays on the zone picker while the preview is made again');

      await preview.getByTestId('confirm-import').click();
      const result = page.getByTestId('import-result');
      await result.getByRole('heading', { name: 'Imported' }).waitFor();
      assert.match(await result.innerText(), new RegExp(`Added ${expected.body.meals_added} meals from Cronometer, Mon 1 Jun – Tue 2 Jun 2026`));

      // Through the API: the meals, read in New York time (UTC−4 in June), marked as Cronometer's.
      const meals = await server.api<{ data: { id: string; source: string; utc_offset_min: number; description: string }[] }>('GET', '/v1/nutrition/meals?start_date=2026-05-31&end_date=2026-06-03&limit=100');
      assert.equal(meals.body.data.length, expected.body.meals_added);
      assert.ok(meals.body.data.every((m) => m.source === 'cronometer' && m.utc_offset_min === -240), JSON.stringify(meals.body.data));

      const row = page.getByTestId('import-row').first();
      await row.waitFor();
      assert.match(await row.innerText(), /Cronometer/);
      const edited = meals.body.data[0]!;
      assert.equal((await server.api('PATCH', `/v1/nutrition/meals/${edited.id}`, { description: 'Edited after the import' })).status, 200);

      await row.getByRole('button', { name: /^Undo the import from Cronometer/ }).click();
      await row.getByRole('button', { name: 'Undo this import' }).click();
      const undone = row.getByTestId('undo-summary');
      await undone.waitFor();
      const text = await undone.innerText();
      assert.match(text, new RegExp(`removed ${expected.body.meals_added - 1} meals\\.`));
      assert.match(text, /Kept 1 meal you edited since the import/);
      const left = await server.api<{ data: { id: string }[] }>('GET', '/v1/nutrition/meals?start_date=2026-05-31&end_date=2026-06-03&limit=100');
      assert.deepEqual(left.body.data.map((m) => m.id), [edited.id]);
      assert.deepEqual(problems, [], 'no console errors or CSP violations');
    } finally {
      await context.close();
    }
  });

  test('refused files show the service’s sentence', async () => {
    const { page, context } = await openImport();
    try {
      const notes = 'shopping list\nmilk\n';
      const expected = await apiUpload<ErrorBody>(server, [{ name: 'notes.txt', data: notes }], { dry_run: 'true' });
      assert.equal(expected.status, 400);
      await page.getByTestId('file-input').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(notes) });
      const error = page.getByTestId('import-error').getByRole('alert');
      await error.waitFor();
      assert.match(await error.innerText(), new RegExp(expected.body.error.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));

      // A file read as another app's: says what was expected and what was found.
      const ouraSaid = await apiUpload<ErrorBody>(server, [{ name: 'servings.csv', data: fx.cronometerNarrowServings() }], { dry_run: 'true', source: 'oura' });
      assert.equal(ouraSaid.status, 400);
      await page.getByLabel('Files from').selectOption('oura');
      await page.getByTestId('file-input').setInputFiles({ name: 'servings.csv', mimeType: 'text/csv', buffer: Buffer.from(fx.cronometerNarrowServings()) });
      await page.getByTestId('import-error').getByText(ouraSaid.body.error.message).waitFor();
      assert.equal(await page.getByTestId('import-preview').count(), 0, 'no preview for a refused file');
      await page.screenshot({ path: join(dir, 'import-error-light.png') });
    } finally {
      await context.close();
    }
  });

  test('keyboard alone: choose an Apple Health zip, import it, undo it', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.waitForSelector('[data-testid="dial-state"]', { timeout: 20_000 });
      await tabTo(page, /^A:Import$/);
      await page.keyboard.press('Enter');
      await page.getByTestId('past-imports').waitFor();
      // Listening for the file dialog turns on its interception, which takes a moment: before the Tabs.
      const chooser = page.waitForEvent('filechooser');
      await tabTo(page, /^BUTTON:Choose files/);
      await page.keyboard.press('Enter');
      await (await chooser).setFiles({ name: 'export.zip', mimeType: 'application/zip', buffer: zipOf([{ name: 'apple_health_export/export.xml', data: fx.appleExportXml() }]) });
      // The preview's heading takes focus when it arrives.
      await page.getByRole('heading', { name: 'Preview: Apple Health' }).waitFor();
      await page.waitForFunction(() => (globalThis as unknown as Doc).document.activeElement?.textContent === 'Preview: Apple Health');
      // Apple's dates carry the export day's offset, not the sample's: samples without their own
      // HKTimeZone are read in the zone shown, the person's.
      assert.equal(await page.getByLabel('Time zone of these files').inputValue(), 'Europe/Berlin');
      await tabTo(page, /^BUTTON:Import 3 meals and 3 nights$/);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Imported' }).waitFor();
      await page.waitForFunction(() => (globalThis as unknown as Doc).document.activeElement?.textContent === 'Imported');
      const nights = await server.api<{ data: { source: string }[] }>('GET', '/v1/sleep/sessions?start_date=2026-06-01&end_date=2026-06-30');
      assert.equal(nights.body.data.filter((s) => s.source === 'apple_health').length, 3);

      await tabTo(page, /^BUTTON:Undo the import from Apple Health/);
      await page.keyboard.press('Enter');
      assert.equal(await focusedName(page), 'BUTTON:Undo this import');
      await page.keyboard.press('Enter');
      const undone = page.getByTestId('import-row').first().getByTestId('undo-summary');
      await undone.waitFor();
      assert.match(await undone.innerText(), /removed 3 meals and 3 nights/);
      await page.waitForFunction(() => ((globalThis as unknown as Doc).document.activeElement?.textContent ?? '').startsWith('Undone'));
      const after = await server.api<{ data: { source: string }[] }>('GET', '/v1/sleep/sessions?start_date=2026-06-01&end_date=2026-06-30');
      assert.equal(after.body.data.filter((s) => s.source === 'apple_health').length, 0);
    } finally {
      await context.close();
    }
  });

  test('a big file shows real upload progress, then processing', async () => {
    const { page, context } = await openImport();
    try {
      // ~6 MB of heart-rate records (read and passed over) around the fixture's nights, sent at
      // 4 MB/s so the upload takes long enough to be watched.
      const filler = Array.from({ length: 40_000 }, (_, i) => {
        const at = fx.appleDate(new Date(Date.UTC(2026, 4, 1) + i * 60_000).toISOString());
        return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" startDate="${at}" endDate="${at}" value="${60 + (i % 30)}"/>\n`;
      }).join('');
      const xml = Buffer.from(fx.appleExportXml(filler));
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 4 * 1024 * 1024 });
      await page.getByTestId('file-input').setInputFiles({ name: 'export.xml', mimeType: 'text/xml', buffer: xml });
      const bar = page.getByTestId('progress-upload');
      await page.waitForFunction(() => {
        const el = (globalThis as unknown as { document: { querySelector(s: string): { value: number; max: number } | null } }).document.querySelector('[data-testid="progress-upload"]');
        return el !== null && el.value > 0 && el.value < el.max;
      });
      assert.match((await bar.getAttribute('aria-valuetext')) ?? '', /^\d+%$/);
      assert.match(await page.getByTestId('import-progress').innerText(), /Checking: sending \d+(\.\d)? MB to Chyme/);
      await page.screenshot({ path: join(dir, 'import-progress-light.png') });
      assert.deepEqual(formatViolations(await axe(page)), '', 'axe while uploading');
      await page.getByRole('heading', { name: 'Preview: Apple Health' }).waitFor({ timeout: 60_000 });
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    } finally {
      await context.close();
    }
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`${theme}: screenshots and accessibility of every state`, async () => {
      const { page, context, problems } = await openImport(theme);
      const found: string[] = [];
      const shoot = async (name: string) => {
        await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
        await page.waitForTimeout(250);
        await page.screenshot({ path: join(dir, `${name}-${theme}.png`), fullPage: true });
        const v = await axe(page);
        if (v.length) found.push(`${name}:\n${formatViolations(v)}`);
      };
      try {
        await shoot('import-empty');
        // The preview with everything it can show: warnings, the zone picker, samples.
        await dropFiles(page, [{ name: 'servings.csv', text: fx.cronometerWideServings() }]);
        await page.getByRole('heading', { name: 'Preview: Cronometer' }).waitFor();
        await shoot('import-preview');
        await page.getByRole('button', { name: 'Cancel' }).click();
        // A real import (MyFitnessPal, inferred meal times), its result, then undone.
        const name = theme === 'light' ? 'Nutrition-Summary-2026.csv' : 'Nutrition-Summary-2018.csv';
        await dropFiles(page, [{ name, text: theme === 'light' ? fx.mfpN2() : fx.mfpN3() }]);
        await page.getByRole('heading', { name: 'Preview: MyFitnessPal' }).waitFor();
        await page.getByTestId('confirm-import').click();
        await page.getByRole('heading', { name: 'Imported' }).waitFor();
        await page.getByTestId('import-row').first().getByRole('button', { name: /^Undo the import/ }).waitFor();
        await shoot('import-done');
        const row = page.getByTestId('import-row').first();
        await row.getByRole('button', { name: /^Undo the import/ }).click();
        await row.getByRole('button', { name: 'Undo this import' }).click();
        await row.getByTestId('undo-summary').waitFor();
        await page.getByTestId('import-result').getByRole('button', { name: 'Import more files' }).click();
        await shoot('import-history');
        assert.deepEqual(found, [], found.join('\n'));
        assert.deepEqual(problems, [], 'no console errors or CSP violations');
      } finally {
        await context.close();
      }
    });
  }
});
