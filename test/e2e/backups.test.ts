/**
 * Integrations → Backups in Chromium: back up now, the age of the last backup, the warning while
 * backups fail, a restore by keyboard alone, and `chyme restore` refreshing open windows; axe-core
 * finds nothing, light and dark.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axe, CLI, formatViolations, iso, launchBrowser, openApp, resultsDir, skipReason, startServer, until, waitForToday, type Server } from './harness.js';

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

  test('`chyme restore` against the running app refreshes its open windows (Today and Log meal), as a restore from the app does', async () => {
    // Both meals on today's date (UTC, the service's zone), so Today lists them at any hour of a
    // run: 2 h and 30 min ago, or closer to now just after midnight.
    const sinceMidnight = Date.now() % 86_400_000;
    const ago = (ms: number) => iso(Date.now() - Math.min(ms, Math.floor(sinceMidnight / 3)));
    const kept = await server.api<{ id: string }>('POST', '/v1/nutrition/meals', { timestamp: ago(7200_000), meal_type: 'lunch', description: 'Kept stew', macros: { calories: 500 } });
    const backup = await server.api<{ path: string }>('POST', '/v1/backups');
    assert.equal(backup.status, 201);
    const gone = await server.api<{ id: string }>('POST', '/v1/nutrition/meals', { timestamp: ago(1800_000), meal_type: 'snack', description: 'Restored-away pear', macros: { calories: 80 } });
    const today = await openApp(browser, server);
    const log = await openApp(browser, server);
    try {
      await waitForToday(today.page);
      await log.page.goto(`${server.url}/#/log`);
      const rowOf = (page: typeof today.page, id: string) => page.locator(`[data-testid="meal-row"][data-meal-id="${id}"]`);
      for (const page of [today.page, log.page]) {
        await rowOf(page, gone.body.id).getByRole('button', { name: /Delete/ }).first().waitFor();
        await rowOf(page, kept.body.id).waitFor();
      }
      // The command, as a person would type it, while both windows stay where they are.
      const restored = spawnSync(process.execPath, [CLI, 'restore', backup.body.path, '--db', server.dbPath], { encoding: 'utf8' });
      assert.equal(restored.status, 0, restored.stderr + restored.stdout);
      for (const page of [today.page, log.page]) {
        await until(async () => (await rowOf(page, gone.body.id).count()) === 0, 'the restored-away meal leaves the window');
        await rowOf(page, kept.body.id).waitFor();
      }
      await today.page.screenshot({ path: join(dir, 'after-cli-restore-today.png') });
      assert.deepEqual([...today.problems, ...log.problems].filter((p) => !/status of 503/.test(p)), [], 'no console errors');
    } finally {
      await today.context.close();
      await log.context.close();
    }
  });
});
