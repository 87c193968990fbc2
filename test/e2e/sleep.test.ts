/**
 * Logging sleep on the Gut score screen for a person in Berlin, in a browser whose machine runs on
 * UTC (issue 19 item 13): a sleep overlapping one already logged is refused with that session's
 * times in the person's zone, and that error is the only message on screen.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, openApp, skipReason, startServer, todayUtcAt, type Server } from './harness.js';

const skip = skipReason();

describe('logging sleep in the person’s zone', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;

  before(async () => {
    // 13:10 UTC is 14:10 in Berlin: last night's default 23:00 → 07:00 is over.
    server = await startServer({ clockMs: todayUtcAt(13, 10), tz: 'Europe/Berlin' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('an overlapping sleep is refused with the other night’s times in Berlin time, one message at a time', async () => {
    const { page, context, problems } = await openApp(browser, server);
    try {
      await page.goto(`${server.url}/#/score`);
      const form = page.getByRole('form', { name: 'Log sleep' });
      const fellAsleep = form.getByLabel('Fell asleep');
      await fellAsleep.waitFor({ timeout: 20_000 });
      // The form proposes last night, 23:00 → 07:00 in Berlin; log it.
      assert.match(await fellAsleep.inputValue(), /T23:00$/);
      await form.getByRole('button', { name: 'Log sleep' }).click();
      const toast = page.getByTestId('toast');
      await toast.filter({ hasText: 'Sleep logged' }).waitFor();

      // The same night again overlaps it.
      await fellAsleep.fill((await fellAsleep.inputValue()).replace(/T23:00$/, 'T23:30'));
      await form.getByRole('button', { name: 'Log sleep' }).click();
      const error = form.locator('.field__error').first();
      await error.waitFor();
      const text = await error.innerText();
      assert.match(text, /overlaps the sleep already logged from \w{3} \d+ \w{3}, 23:00 to \w{3} \d+ \w{3}, 0?7:00\./, text);
      assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T|\d{2}Z|sleep_/, text);
      // The earlier "Sleep logged" is gone: the error is the one message.
      assert.equal(await toast.count(), 0, 'no toast beside the error');
      assert.deepEqual(
        problems.filter((p) => !/status of 409/.test(p)),
        [],
      );
    } finally {
      await context.close();
    }
  });
});
