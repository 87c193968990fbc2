/**
 * Pairing the phone by scanning the desktop's QR code with its camera (issue 29 item 4, "join ...
 * by a QR code fed to Chromium's fake camera"). A real `chyme relay` serves the phone app at its
 * own /app/ and a real `chyme serve` (the desktop) has sync set up; the QR code holds the URL its
 * `GET /v1/sync/pairing-code` answers, rendered with `qrcode` into a YUV4MPEG2 video that Chromium
 * plays as its camera (`--use-file-for-fake-video-capture`), so the app's own getUserMedia, canvas
 * and jsQR read it. The fake camera is fixed per browser, so each video gets its own Chromium.
 *
 * - A QR code that is not Chyme's: the dialog says so and keeps looking; axe finds nothing on it
 *   in light and dark; Escape closes it, stops every track and returns focus to the button; a page
 *   going out of sight closes it too; nothing is joined. A refused camera and a missing one each
 *   get their sentence.
 * - The desktop's QR code: Scan opens the rear camera, the phone joins, and the desktop's meal
 *   shows on the phone's Today; the camera is off again.
 * - No console errors or CSP violations.
 *
 * Waits are bounds on hangs, not speed checks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import QRCode from 'qrcode';
import { startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { axe, formatViolations, launchBrowser, resultsDir, skipReason, waitForToday } from './harness.js';
import { APP, clearOfMidnight, phoneApi, phoneSkip, stopPhoneSync, waitReady, watch } from './phone-harness.js';

const skip = phoneSkip || (skipReason() ?? false);
const PHONE_SCREEN = { width: 390, height: 844 };
/** Bounds on hangs: a join over a busy 2-core machine. */
const JOIN_MS = 90_000;
const SEEN_MS = 60_000;

/** The fake camera's picture: Chromium's default capture size. */
const W = 640;
const H = 480;
/** Pixels per module, and the quiet zone (in modules) that the QR standard asks for around the code. */
const PX = 6;
const QUIET = 4;
const FRAMES = 5;
/** Luma of video range (BT.601): white paper, black modules, a grey table around. */
const WHITE = 235;
const BLACK = 16;
const GREY = 110;

/**
 * `text` as a QR code in a YUV4MPEG2 (4:2:0) file of FRAMES frames, which Chromium's fake camera
 * plays in a loop: the code on white with its quiet zone, in the middle of a grey picture.
 */
function qrVideo(text: string, file: string): void {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const side = (modules.size + 2 * QUIET) * PX;
  assert.ok(side <= H, `the code fits the picture (${side} px)`);
  const luma = Buffer.alloc(W * H, GREY);
  const left = (W - side) >> 1;
  const top = (H - side) >> 1;
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const row = Math.floor(y / PX) - QUIET;
      const col = Math.floor(x / PX) - QUIET;
      const dark = row >= 0 && col >= 0 && row < modules.size && col < modules.size && modules.get(row, col);
      luma[(top + y) * W + left + x] = dark ? BLACK : WHITE;
    }
  }
  // The U and V planes, a quarter of the pixels each: no colour.
  const chroma = Buffer.alloc((W * H) / 2, 128);
  const frame = Buffer.concat([Buffer.from('FRAME\n'), luma, chroma]);
  writeFileSync(file, Buffer.concat([Buffer.from(`YUV4MPEG2 W${W} H${H} F10:1 Ip A1:1 C420jpeg\n`), ...Array<Buffer>(FRAMES).fill(frame)]));
}

/**
 * Runs `fn` with a Chromium whose only camera plays `video`, every camera prompt answered yes, and
 * closes it however `fn` ends (the next test's Chromium waits for the e2e browser lock).
 */
async function withCamera(video: string, fn: (browser: Browser) => Promise<void>): Promise<void> {
  const browser = await launchBrowser(['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-video-capture=${video}`]);
  try {
    await fn(browser);
  } finally {
    await browser.close();
  }
}

/** The page's globals these tests read, typed without the DOM library. */
interface CameraGlobal {
  /** Set by the test: the DOMException name the next getUserMedia fails with. */
  cameraFails?: string;
  /** What the page asked getUserMedia for, and every track it got. */
  cameraAsked?: unknown;
  cameraTracks: Array<{ readyState: string }>;
}

/**
 * Wraps getUserMedia before the app loads, to see what the app asks for and whether it stops every
 * track, and to make the camera fail on the test's word.
 */
function spyOnCamera(): void {
  const g = globalThis as unknown as CameraGlobal & { navigator: { mediaDevices: { getUserMedia(c: unknown): Promise<{ getTracks(): CameraGlobal['cameraTracks'] }> } } };
  const devices = g.navigator.mediaDevices;
  const real = devices.getUserMedia.bind(devices);
  g.cameraTracks = [];
  devices.getUserMedia = async (constraints) => {
    g.cameraAsked = constraints;
    if (g.cameraFails) throw new DOMException('The test says no.', g.cameraFails);
    const stream = await real(constraints);
    g.cameraTracks.push(...stream.getTracks());
    return stream;
  };
}

const tracks = (page: Page) => page.evaluate(() => (globalThis as unknown as CameraGlobal).cameraTracks.map((t) => t.readyState));

describe('the phone pairs by scanning the desktop’s QR code with its camera', { skip }, () => {
  let dir: string;
  let relay: RelayProcess;
  let desktop: Device;
  /** What the desktop's "Add a phone" QR code holds: the relay's /app/ with the code in the fragment. */
  let pairingUrl: string;
  let app: string;
  const problems: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-phone-qr-'));
    relay = await startRelay(join(dir, 'relay'));
    desktop = await startDevice(dir, 'desktop');
    // Looked for on the phone's Today once it has joined, minutes later: today still then.
    await clearOfMidnight(60_000, 5 * 60_000);
    const meal = await desktop.api('POST', '/v1/nutrition/meals', { timestamp: new Date(Date.now() - 60_000).toISOString(), meal_type: 'snack', description: 'Desk pear', macros: { calories: 90 } });
    assert.equal(meal.status, 201, JSON.stringify(meal.json));
    const setup = await desktop.api('POST', '/v1/sync/setup', { relay: relay.url, token: relay.token, name: 'Desktop' });
    assert.equal(setup.status, 201, JSON.stringify(setup.json));
    pairingUrl = (await desktop.api<{ url: string }>('GET', '/v1/sync/pairing-code')).json.url;
    app = `http://127.0.0.1:${relay.port}${APP}`;
    assert.ok(pairingUrl.startsWith(`${app}#pair=`), pairingUrl);
  });

  after(() => stopPhoneSync({ desktop, relay, dir }));

  /** A phone at 390×844 with the camera allowed, on the relay's app, at its sync card. */
  async function phoneOnSyncCard(b: Browser): Promise<{ context: BrowserContext; page: Page }> {
    const context = await b.newContext({ ...devices['Pixel 7'], viewport: PHONE_SCREEN, timezoneId: 'UTC', locale: 'en-GB', permissions: ['camera'], reducedMotion: 'reduce' });
    await context.addInitScript(spyOnCamera);
    const page = await context.newPage();
    watch(page, problems);
    await page.goto(`${app}#/integrations`);
    await waitReady(page);
    await page.locator('[data-testid="sync-card"][data-sync="off"]').waitFor();
    return { context, page };
  }

  test('a QR code that is not Chyme’s is named and joins nothing; the dialog is accessible and lets go of the camera; a refused or missing camera is said', async () => {
    const video = join(dir, 'not-chyme.y4m');
    qrVideo('https://example.org/lunch-menu', video);
    await withCamera(video, async (browser) => {
      const { context, page } = await phoneOnSyncCard(browser);
      const scan = page.getByRole('button', { name: 'Scan QR code' });
      await scan.click();
      const dialog = page.getByRole('dialog', { name: 'Scan the pairing QR code' });
      await dialog.waitFor();
      await dialog.getByRole('status').filter({ hasText: 'That QR code is not a Chyme pairing code.' }).waitFor({ timeout: SEEN_MS });
      assert.deepEqual(await page.evaluate(() => (globalThis as unknown as CameraGlobal).cameraAsked), { video: { facingMode: 'environment' }, audio: false }, 'the rear camera, no microphone');
      assert.deepEqual(await tracks(page), ['live'], 'one live video track while the dialog is open');
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        await page.screenshot({ path: join(resultsDir('phone'), `qr-scanner-${colorScheme}.png`) });
        const found = await axe(page);
        assert.deepEqual(found, [], `axe, the scanner dialog, ${colorScheme}:\n${formatViolations(found)}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });

      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      assert.deepEqual(await tracks(page), ['ended'], 'Escape stopped the track');
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent?.trim()), 'Scan QR code', 'focus is back on the button');
      assert.equal(await page.getByLabel('Pairing code').inputValue(), '', 'nothing was filled in');
      assert.equal((await phoneApi<{ enabled: boolean }>(page, 'GET', '/v1/sync')).body.enabled, false, 'nothing was joined');

      // The page going out of sight closes the dialog and lets go of the camera.
      await scan.click();
      await until('a second track', async () => (await tracks(page)).length === 2 || undefined, SEEN_MS);
      await page.evaluate(() => {
        const doc = (globalThis as unknown as { document: { dispatchEvent(e: unknown): boolean } }).document;
        Object.defineProperty(doc, 'visibilityState', { configurable: true, value: 'hidden' });
        doc.dispatchEvent(new Event('visibilitychange'));
    });
    await dialog.waitFor({ state: 'detached' });
    assert.deepEqual(await tracks(page), ['ended', 'ended'], 'hiding the page stopped the track');
    await page.evaluate(() => delete (globalThis as unknown as { document: { visibilityState?: string } }).document.visibilityState);

    // A camera refused, and none at all: a sentence each, in the dialog, and Cancel closes it.
    for (const [name, sentence] of [['NotAllowedError', /^Chyme may not use the camera\. Allow the camera/], ['NotFoundError', /^This device has no camera Chyme can use\./]] as const) {
      await page.evaluate((n) => ((globalThis as unknown as CameraGlobal).cameraFails = n), name);
      await scan.click();
      assert.match(await dialog.getByRole('alert').innerText(), sentence, name);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
    }
    await context.close();
    });
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });

  test('scanning the desktop’s QR code joins the phone, and the desktop’s meal shows on its Today', async (t) => {
    const video = join(dir, 'pairing.y4m');
    qrVideo(pairingUrl, video);
    await withCamera(video, async (browser) => {
      const { context, page } = await phoneOnSyncCard(browser);
      const started = Date.now();
      await page.getByRole('button', { name: 'Scan QR code' }).click();
      // The scanner closes on the code and the card joins with it, as if it had been typed.
      await page.locator('[data-testid="sync-card"][data-sync="on"]').waitFor({ timeout: JOIN_MS });
      t.diagnostic(`from Scan to sync on: ${Date.now() - started} ms (1 meal, headless Chromium)`);
      assert.equal(await page.getByRole('dialog').count(), 0, 'the scanner is closed');
      assert.deepEqual(await tracks(page), ['ended'], 'the camera is off');
      const status = (await phoneApi<{ enabled: boolean; peers: Array<{ device_name: string }> }>(page, 'GET', '/v1/sync')).body;
      assert.ok(status.enabled && status.peers.some((p) => p.device_name === 'Desktop'), JSON.stringify(status));

      await page.getByRole('link', { name: 'Today' }).click();
      await waitForToday(page);
      await page.getByTestId('meal-row').filter({ hasText: 'Desk pear' }).waitFor({ timeout: SEEN_MS });
      await context.close();
    });
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
