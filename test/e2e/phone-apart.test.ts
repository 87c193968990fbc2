/**
 * The phone's edits while apart from the computers, and what "Forget this phone" leaves (issue 29's
 * checks): the same field edited on both sides converges to one value on both, a delete beats an
 * edit (whichever side deletes), and after Forget the origin holds under 1 MB besides the app's offline
 * copy (which Forget deletes, but see `personal`).
 *
 * As in phone-sync.test.ts: a real `chyme relay` and `chyme serve` (the desktop), the phone as
 * Chromium at 390×844 on the origin that serves its files, whose WebSocket upgrades reach the relay
 * through the switch of phone-harness.ts (`relayThrough`), so "apart" is the phone's connection cut
 * while the desktop stays connected. The phone joins through its own `/v1/sync/join` (the card's
 * join is phone-sync.test.ts's).
 *
 * Waits are bounds on hangs, not speed checks. The tests run in order: each starts where the one
 * before left off.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { devices, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { decodePairingCode, encodePairingCode } from '../../server/sync/index.js';
import { startDevice, startRelay, until, type Device, type RelayProcess } from '../helpers/sync.js';
import { launchBrowser, skipReason } from './harness.js';
import { APP, phoneApi, phoneSkip, relayThrough, serveStatic, stopPhoneSync, waitReady, watch, type PhoneSite } from './phone-harness.js';

const skip = phoneSkip || (skipReason() ?? false);
const PHONE_SCREEN = { width: 390, height: 844 };
/** A bound on hangs: a change crossing relay and engine twice on a busy 2-core machine. */
const ARRIVES_MS = 60_000;
const MB = 1024 * 1024;

interface Meal {
  id: string;
  description: string;
  macros: { calories: number | null };
}
interface Conflict {
  record_type: string;
  record_id: string;
  field: string;
  kept: unknown;
  other_values: unknown[];
}
interface SyncStatus {
  enabled: boolean;
  connected: boolean;
  pending_changes: number;
  peers: Array<{ device_name: string; this_device: boolean }>;
  conflicts: Conflict[];
}
/** What Chromium's `navigator.storage.estimate()` answers (`usageDetails` is Chromium's own). */
interface Estimate {
  usage: number;
  quota: number;
  usageDetails?: Record<string, number>;
}

/** `promise`, or a failure naming `what` after ARRIVES_MS: a bound on a hang. */
async function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ARRIVES_MS} ms: ${what}`)), ARRIVES_MS)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
const phoneSync = async (page: Page) => (await phoneApi<SyncStatus>(page, 'GET', '/v1/sync')).body;
const desktopSync = async (d: Device) => (await d.api<SyncStatus>('GET', '/v1/sync')).json;
/** A meal as each side has it: its calories, or null when the side has no such meal (404). */
async function desktopCalories(d: Device, id: string): Promise<number | null | 'gone'> {
  const r = await d.api<Meal>('GET', `/v1/nutrition/meals/${id}`);
  if (r.status === 404) return 'gone';
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.macros.calories;
}
async function phoneCalories(page: Page, id: string): Promise<number | null | 'gone'> {
  const r = await phoneApi<Meal>(page, 'GET', `/v1/nutrition/meals/${id}`);
  if (r.status === 404) return 'gone';
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.macros.calories;
}
const estimate = (page: Page) =>
  page.evaluate(async () => {
    const e = await (globalThis as unknown as { navigator: { storage: { estimate(): Promise<Estimate> } } }).navigator.storage.estimate();
    return { usage: e.usage, quota: e.quota, usageDetails: e.usageDetails };
  });
/**
 * What the origin stores besides the app's offline copy (the service worker and its cache of the
 * app's files). Chromium counts a deleted cache until the service worker that had it open stops,
 * and the page that Forget reloads installs the offline copy afresh, as a first visit does.
 */
const personal = (e: Estimate) => e.usage - (e.usageDetails?.caches ?? 0) - (e.usageDetails?.serviceWorkerRegistrations ?? 0);
const describeEstimate = (e: Estimate) =>
  `${(e.usage / MB).toFixed(3)} MB (${Object.entries(e.usageDetails ?? {})
    .map(([k, v]) => `${k} ${(v / MB).toFixed(3)} MB`)
    .join(', ')})`;

describe('the phone apart from the computers: concurrent edits converge, a delete beats an edit, Forget leaves under 1 MB besides the app’s offline copy', { skip }, () => {
  let dir: string;
  let relay: RelayProcess;
  let desktop: Device;
  let site: PhoneSite;
  let link: ReturnType<typeof relayThrough>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();

  /** A meal created on the desktop, then waited for on the phone: a meal both know. */
  async function sharedMeal(description: string, calories: number, minutesAgo: number): Promise<string> {
    const r = await desktop.api<Meal>('POST', '/v1/nutrition/meals', { timestamp: at(minutesAgo), meal_type: 'snack', description, macros: { calories } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    await until(`${description} on the phone`, async () => (await phoneCalories(page, r.json.id)) === calories, ARRIVES_MS);
    return r.json.id;
  }

  /** Cuts the phone from the relay and waits until it knows. */
  async function apart(): Promise<void> {
    link.cut();
    await until('the phone notices the cut', async () => !(await phoneSync(page)).connected, ARRIVES_MS);
  }

  /** Restores the phone's connection and waits until it has sent everything it kept. */
  async function together(): Promise<void> {
    link.restore();
    await until('the phone is connected again with nothing pending', async () => {
      const s = await phoneSync(page);
      return s.connected && s.pending_changes === 0;
    }, ARRIVES_MS);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chyme-phone-apart-'));
    relay = await startRelay(join(dir, 'relay'));
    desktop = await startDevice(dir, 'desktop');
    const setup = await desktop.api('POST', '/v1/sync/setup', { relay: relay.url, token: relay.token, name: 'Desktop' });
    assert.equal(setup.status, 201, JSON.stringify(setup.json));
    const code = (await desktop.api<{ pairing_code: string }>('GET', '/v1/sync/pairing-code')).json.pairing_code;
    site = await serveStatic();
    link = relayThrough(site.server, relay.port);
    browser = await launchBrowser();
    context = await browser.newContext({ ...devices['Pixel 7'], viewport: PHONE_SCREEN, timezoneId: 'UTC', locale: 'en-GB' });
    page = await context.newPage();
    watch(page, problems);
    await page.goto(`${site.app}phone.html`);
    await waitReady(page);
    const pairing_code = encodePairingCode({ relay: site.url.replace(/^http/, 'ws'), secret: decodePairingCode(code).secret });
    const joined = await phoneApi<SyncStatus>(page, 'POST', '/v1/sync/join', { pairing_code, name: 'Pixel' });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    await until('the phone is connected', async () => (await phoneSync(page)).connected, ARRIVES_MS);
  });

  after(() => stopPhoneSync({ browser, desktop, relay, site, dir }));

  test('the same field edited on the phone and on the desktop while apart ends with one value on both, and the clash is listed', async () => {
    const id = await sharedMeal('Porridge', 300, 30);
    await apart();
    assert.equal((await phoneApi(page, 'PATCH', `/v1/nutrition/meals/${id}`, { macros: { calories: 310 } })).status, 200);
    assert.equal((await desktop.api('PATCH', `/v1/nutrition/meals/${id}`, { macros: { calories: 420 } })).status, 200);
    assert.equal(await phoneCalories(page, id), 310, 'the phone keeps its own edit while apart');
    assert.equal(await desktopCalories(desktop, id), 420, 'the desktop keeps its own edit while apart');
    await together();

    let both: Array<number | null | 'gone'> = [];
    await until('both sides have one value', async () => {
      both = [await phoneCalories(page, id), await desktopCalories(desktop, id)];
      return both[0] === both[1];
    }, ARRIVES_MS);
    assert.ok(both[0] === 310 || both[0] === 420, `one of the two edits wins: ${JSON.stringify(both)}`);
    // As between computers (test/sync/partitions.test.ts): at least the side that lost lists the clash.
    let listed: Conflict[] = [];
    await until('the clash is listed on a side', async () => {
      listed = [...(await phoneSync(page)).conflicts, ...(await desktopSync(desktop)).conflicts].filter((c) => c.record_id === id);
      return listed.length > 0;
    }, ARRIVES_MS);
    assert.ok(listed.every((c) => c.record_type === 'meal' && c.field === 'calories' && c.kept === both[0]), JSON.stringify(listed));
  });

  test('a delete beats an edit: the phone deletes what the desktop edits, and the desktop deletes what the phone edits', async () => {
    const deletedOnPhone = await sharedMeal('Toast', 250, 20);
    const deletedOnDesktop = await sharedMeal('Biscuit', 90, 10);
    await apart();
    assert.equal((await phoneApi(page, 'DELETE', `/v1/nutrition/meals/${deletedOnPhone}`)).status, 200);
    assert.equal((await desktop.api('PATCH', `/v1/nutrition/meals/${deletedOnPhone}`, { description: 'Toast with jam', macros: { calories: 330 } })).status, 200);
    assert.equal((await desktop.api('DELETE', `/v1/nutrition/meals/${deletedOnDesktop}`)).status, 200);
    assert.equal((await phoneApi(page, 'PATCH', `/v1/nutrition/meals/${deletedOnDesktop}`, { description: 'Two biscuits', macros: { calories: 180 } })).status, 200);
    await together();

    for (const [name, id] of [['deleted on the phone', deletedOnPhone], ['deleted on the desktop', deletedOnDesktop]] as const) {
      await until(`the meal ${name} is gone on both`, async () => (await phoneCalories(page, id)) === 'gone' && (await desktopCalories(desktop, id)) === 'gone', ARRIVES_MS);
      // And it stays gone: a later edit on either side finds nothing to edit.
      assert.equal((await phoneApi(page, 'PATCH', `/v1/nutrition/meals/${id}`, { description: 'again' })).status, 404, name);
      assert.equal((await desktop.api('PATCH', `/v1/nutrition/meals/${id}`, { description: 'again' })).status, 404, name);
    }
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });

  test('"Forget this phone" leaves under 1 MB of the person’s storage, removes the app’s offline copy, and the reload stores no more', async (t) => {
    const before = await estimate(page);
    t.diagnostic(`storage in use before Forget: ${describeEstimate(before)}`);
    // The reload after Forget is held until the origin's storage is measured, from a second page
    // of the origin that runs nothing (the app's icon).
    let reloadAsked!: () => void;
    const reloading = new Promise<void>((r) => (reloadAsked = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const theReload = (u: URL) => u.pathname === `${APP}phone.html`;
    await page.route(theReload, async (route) => {
      reloadAsked();
      await released;
      await route.continue();
    });

    await page.getByRole('link', { name: 'Integrations' }).click();
    const on = page.locator('[data-testid="sync-card"][data-sync="on"]');
    await on.getByRole('button', { name: 'Forget this phone…' }).click();
    await on.getByRole('button', { name: 'Yes, erase this phone’s Chyme' }).click();
    await bounded(reloading, 'the reload after Forget reaches the network (no service worker answers it)');
    const onlooker = await context.newPage();
    await onlooker.goto(`${site.app}icon.svg`);
    const forgotten = await estimate(onlooker);
    const offlineCopy = await onlooker.evaluate(async () => {
      const g = globalThis as unknown as { caches: { keys(): Promise<string[]> }; navigator: { serviceWorker: { getRegistrations(): Promise<unknown[]> } } };
      return { caches: await g.caches.keys(), workers: (await g.navigator.serviceWorker.getRegistrations()).length };
    });
    await onlooker.close();
    release();
    t.diagnostic(`storage in use after Forget, before its reload: ${describeEstimate(forgotten)}`);
    assert.deepEqual(offlineCopy, { caches: [], workers: 0 }, 'the app’s offline copy is gone');
    assert.ok(personal(forgotten) < MB, `under 1 MB of the person’s storage after Forget: ${describeEstimate(forgotten)}`);

    await page.waitForURL((u) => !u.hash.includes('integrations'), { timeout: ARRIVES_MS });
    const ready = await waitReady(page);
    assert.equal(ready.created, true, 'a new database after forgetting');
    await page.unroute(theReload);
    const reloaded = await estimate(page);
    t.diagnostic(`storage in use after the reload: ${describeEstimate(reloaded)}`);
    assert.ok(personal(reloaded) < MB, `under 1 MB of the person’s storage after the reload: ${describeEstimate(reloaded)}`);
    assert.deepEqual(problems, [], 'no console errors or CSP violations');
  });
});
