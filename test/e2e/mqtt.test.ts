/**
 * Integrations → Home Assistant (MQTT) in Chromium against a real Mosquitto: a refused login shown
 * as a sentence, then the right one connecting, with the live status; typed with the keyboard
 * alone; axe-core finds nothing, light and dark.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { mosquittoAvailable, startBroker, watch, type Broker } from '../helpers/mosquitto.js';
import { axe, formatViolations, launchBrowser, openApp, resultsDir, skipReason, startServer, type Server } from './harness.js';

const skip = skipReason() ?? (mosquittoAvailable() ? null : 'needs Debian\'s mosquitto');

describe('Home Assistant (MQTT) card', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let broker: Broker;
  const dir = resultsDir('mqtt');

  before(async () => {
    broker = await startBroker();
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await broker?.close();
  });

  test('connect with the keyboard: a wrong password is explained, the right one connects and the device appears', async () => {
    const sub = await broker.client();
    const seen = await watch(sub, 'homeassistant/#');
    for (const scheme of ['light', 'dark'] as const) {
      const { page, context } = await openApp(browser, server, { colorScheme: scheme });
      try {
        await page.goto(`${server.url}/#/integrations`);
        const card = page.getByTestId('mqtt-card');
        await card.waitFor();
        if (scheme === 'light') {
          await card.getByLabel('Broker').focus();
          await page.keyboard.type(broker.url);
          await page.keyboard.press('Tab');
          await page.keyboard.type(broker.user);
          await page.keyboard.press('Tab');
          await page.keyboard.type('wrong-password');
          // Test connection, by keyboard.
          await card.getByRole('button', { name: 'Test connection' }).focus();
          await page.keyboard.press('Enter');
          await card.getByTestId('mqtt-test-result').filter({ hasText: 'refused the user name or password' }).waitFor();
          await card.getByLabel('Password').fill('');
          await card.getByLabel('Password').focus();
          await page.keyboard.type(broker.password);
          await page.keyboard.press('Enter'); // submits: Save and connect
        }
        await card.getByTestId('mqtt-status').filter({ hasText: 'Connected' }).waitFor({ timeout: 20_000 });
        // The refused test was about the form before the save: no old error stays beside the newer success.
        assert.equal(await card.getByText('refused the user name or password').count(), 0);
        await card.screenshot({ path: join(dir, `mqtt-${scheme}.png`) });
        const found = await axe(page);
        assert.deepEqual(found, [], formatViolations(found));
      } finally {
        await context.close();
      }
    }
    await seen.until(() => [...seen.latest.keys()].some((k) => k.endsWith('/digestive_state/config')), 'the device in Home Assistant');
    const stored = await server.api<{ has_password: boolean; status: string }>('GET', '/v1/integrations/mqtt');
    assert.equal(stored.body.has_password, true);
    assert.equal(stored.body.status, 'connected');
  });
});
