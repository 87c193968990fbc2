/**
 * Integrations → Backups in Chromium: back up now, the age of the last backup, the warning while
 * backups fail, and a restore by keyboard alone; axe-core finds nothing serious, light and dark.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axe, formatViolations, iso, launchBrowser, openApp, resultsDir, skipReason, startServer, type Server } from './harness.js';

const skip = skipReason();

describe('Backups card', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('backups');

  before(async () => {
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('back up now, failing backups warned about, restore by keyboard; accessible light and dark', async () => {
    const kept = await server.api<{ id: string }>('POST', '/v1/nutrition/meals', { timestamp: iso(Date.now() - 3600_000), meal_type: 'lunch', description: 'Kept soup', macros: { calories: 400 } });
    const { page, context, problems } = await openApp(browser, server, { colorScheme: 'light' });
    try {
      await page.goto(`${server.url}/#/integrations`);
      const card = page.getByTestId('backups-card');
      await card.waitFor();
      await card.getByTestId('backup-now').click();
      await card.getByTestId('backup-result').filter({ hasText: 'Backed up to' }).waitFor();
      await card.getByTestId('backups-last').filter({ hasText: 'just now' }).waitFor();
      await card.screenshot({ path: join(dir, 'backups-light.png') });
      const light = await axe(page);
      assert.deepEqual(light, [], formatViolations(light));

      // The folder turns unusable: backing up fails, and the card says so until it works again.
      const folder = join(server.dir, 'usb');
      assert.equal((await server.api('PATCH', '/v1/backups/settings', { folder })).status, 200);
      rmSync(folder, { recursive: true });
      writeFileSync(folder, 'a file where the folder was');
      await page.reload();
      await card.getByTestId('backup-now').click();
      await card.getByTestId('backups-failing').waitFor();
      assert.match(await card.getByTestId('backups-failing').innerText(), /Backups are failing[\s\S]*not writable/);
      await card.screenshot({ path: join(dir, 'backups-failing-light.png') });
      const failing = await axe(page);
      assert.deepEqual(failing, [], formatViolations(failing));
      rmSync(folder);
      assert.equal((await server.api('PATCH', '/v1/backups/settings', { folder: null })).status, 200);

      // A meal logged after the backup, then the backup restored with the keyboard alone.
      const later = await server.api<{ id: string }>('POST', '/v1/nutrition/meals', { timestamp: iso(Date.now() - 600_000), meal_type: 'snack', description: 'Later apple', macros: { calories: 90 } });
      await page.reload();
      const restore = card.getByRole('listitem').last().getByRole('button', { name: 'Restore…' });
      await restore.focus();
      await page.keyboard.press('Enter');
      const confirm = card.getByRole('button', { name: 'Replace my data with this backup' });
      await confirm.waitFor();
      assert.equal(await confirm.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement), true, 'focus moves to the confirmation');
      await page.keyboard.press('Enter');
      await page.waitForEvent('load', { timeout: 15_000 });
      assert.equal((await server.api('GET', `/v1/nutrition/meals/${later.body.id}`)).status, 404);
      assert.equal((await server.api('GET', `/v1/nutrition/meals/${kept.body.id}`)).status, 200);
      assert.deepEqual(problems.filter((p) => !/status of 503/.test(p)), [], 'no console errors');
    } finally {
      await context.close();
    }

    const dark = await openApp(browser, server, { colorScheme: 'dark' });
    try {
      await dark.page.goto(`${server.url}/#/integrations`);
      await dark.page.getByTestId('backups-card').getByTestId('backups-last').waitFor();
      await dark.page.getByTestId('backups-card').screenshot({ path: join(dir, 'backups-dark.png') });
      const found = await axe(dark.page);
      assert.deepEqual(found, [], formatViolations(found));
    } finally {
      await dark.context.close();
    }
  });
});
