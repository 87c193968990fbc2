/**
 * Issue #10 item 7 in the app: a webhook to an HTTPS receiver with a self-signed certificate (made
 * by openssl here) fails its test and shows the certificate's fingerprint on the card; "Trust this
 * certificate" pins it, and the next test is delivered. The card passes axe-core in light and dark.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { selfSignedCertificate } from '../helpers/tls.js';
import { startReceiver, type Receiver } from '../webhooks/helpers.js';
import { axe, formatViolations, launchBrowser, openApp, skipReason, startServer, waitForToday, type Server } from './harness.js';

const skip = skipReason();

describe('webhook card: trusting a self-signed receiver by its fingerprint', { skip: skip ?? false }, () => {
  let server: Server;
  let browser: Browser;
  let page: Page;
  let rx: Receiver;
  const cert = selfSignedCertificate();

  before(async () => {
    rx = await startReceiver(undefined, { tls: cert });
    server = await startServer({ tz: 'UTC' });
    browser = await launchBrowser();
    page = (await openApp(browser, server)).page;
    await waitForToday(page);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rx?.close();
  });

  test('the test fails with the fingerprint shown; trusting it makes the next test succeed', async () => {
    await page.getByRole('link', { name: 'Integrations' }).click();
    await page.waitForSelector('[data-testid="integrations"]', { timeout: 15_000 });
    await page.getByLabel('Endpoint URL').fill(rx.url);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const row = page.getByTestId('webhook-row').filter({ hasText: rx.url });
    await row.waitFor();

    await row.getByRole('button', { name: 'Send test' }).click();
    const result = row.getByTestId('webhook-test-result');
    await result.waitFor();
    assert.match(await result.innerText(), /^Not delivered .*self-signed/);
    const card = row.getByTestId('webhook-certificate');
    assert.ok((await card.innerText()).includes(cert.sha256), 'the fingerprint openssl prints is on the card');
    assert.equal(rx.received.length, 0);

    const light = await axe(page);
    assert.equal(light.length, 0, `light: ${formatViolations(light)}`);
    // Dark in a page of its own (switching the scheme in place would measure colours mid-transition);
    // the fingerprint comes from the subscription this time (observed_certificate_sha256).
    const dark = (await openApp(browser, server, { colorScheme: 'dark' })).page;
    try {
      await waitForToday(dark);
      await dark.getByRole('link', { name: 'Integrations' }).click();
      await dark.getByTestId('webhook-certificate').filter({ hasText: cert.sha256 }).waitFor();
      const violations = await axe(dark);
      assert.equal(violations.length, 0, `dark: ${formatViolations(violations)}`);
    } finally {
      await dark.close();
    }

    await card.getByRole('button', { name: 'Trust this certificate' }).click();
    await card.getByRole('button', { name: 'Yes, trust exactly this certificate' }).click();
    await card.getByText('Trusts only the certificate').waitFor();
    const sub = (await server.api<any>('GET', '/v1/webhooks')).body.data.find((s: any) => s.url === rx.url);
    assert.equal(sub.tls_certificate_sha256, cert.sha256);

    await row.getByRole('button', { name: 'Send test' }).click();
    await row.getByTestId('webhook-test-result').filter({ hasText: /^Delivered · HTTP 200/ }).waitFor();
    assert.equal(rx.received.length, 1);
    assert.equal(rx.received[0]!.json.type, 'test.ping');
  });
});
