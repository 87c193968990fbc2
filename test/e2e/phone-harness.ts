/**
 * What the phone's browser tests share: the built phone app (build/phone) served by the relay's
 * own file server at /app/, and the page's test surface (`window.chymeStorage`,
 * renderer/src/phone/main.tsx).
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PHONE_APP_PATH } from '../../server/sync/pairing-url.js';
import { PhoneAppFiles } from '../../server/sync/relay-app.js';
import type { CoreReady } from '../../renderer/src/phone/protocol.js';
import type { Device, RelayProcess } from '../helpers/sync.js';
import { CHROMIUM, ROOT } from './harness.js';

export const PHONE = join(ROOT, 'build/phone');

export const phoneSkip = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`
  : !existsSync(join(PHONE, 'phone.html'))
    ? 'build/phone is missing: run `npm run build:renderer` first'
    : false;

/** Where the relay serves the app, and so the harness too: request paths below it name files of build/phone. */
export const APP = PHONE_APP_PATH;

/** The file of the app (relative to its folder) that a request path names, or null for a path outside the app. */
export const appFileOf = (path: string): string | null => (path.startsWith(APP) ? (path === APP ? 'phone.html' : path.slice(APP.length)) : null);

export interface PhoneSite {
  server: Server;
  /** The server's origin (http://127.0.0.1:port), also the relay's address in the phone tests that pass WebSocket upgrades on. */
  url: string;
  /** The app's address: `${url}/app/`. */
  app: string;
  /** Every path asked for, in order. */
  requests: string[];
  /** Each answer's status and the bytes of its body as sent (compressed where the browser accepted it; 0 for a 304). */
  sent: { path: string; status: number; bytes: number }[];
}

/**
 * build/phone (or a copy at `root`) served by the relay's own file server (`PhoneAppFiles`,
 * server/sync/relay-app.ts) under /app/, so the tests get exactly the relay's headers, CSP,
 * compression and caching; any other path is 404.
 */
export function serveStatic({ root = PHONE } = {}): Promise<PhoneSite> {
  const files = new PhoneAppFiles(root);
  const requests: string[] = [];
  const sent: PhoneSite['sent'] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(path);
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const body = args[0];
      sent.push({ path, status: res.statusCode, bytes: typeof body === 'string' || body instanceof Uint8Array ? Buffer.byteLength(body) : 0 });
      return end(...args);
    }) as ServerResponse['end'];
    if (!files.handle(req, res, path)) res.writeHead(404).end();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ server, url, app: `${url}${APP}`, requests, sent });
    }),
  );
}

export interface StorageGlobal {
  chymeStorage: {
    state: string;
    ready: CoreReady | null;
    request(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<{ status: number; body: unknown; etag: string | null }>;
  };
}

/** The page's storage state and, once open, the worker's report. */
export const storageState = (page: Page) =>
  page.evaluate(() => {
    const s = (globalThis as unknown as StorageGlobal).chymeStorage;
    return { state: s.state, ready: s.ready };
  });

export async function waitReady(page: Page): Promise<CoreReady> {
  await page.waitForFunction(() => ['ready', 'failed'].includes((globalThis as unknown as StorageGlobal).chymeStorage?.state), undefined, { timeout: 30_000 });
  const { state, ready } = await storageState(page);
  assert.equal(state, 'ready', `the database opened: ${await page.locator('#status').innerText()}`);
  return ready!;
}

/** A `/v1` request through the page's transport to its worker (the path the screens' requests take). */
export const phoneApi = <T = unknown>(page: Page, method: string, path: string, body?: unknown, query?: Record<string, string>) =>
  page.evaluate(([m, p, b, q]) => (globalThis as unknown as StorageGlobal).chymeStorage.request(m, p, b, q), [method, path, body, query] as const) as Promise<{
    status: number;
    body: T;
    etag: string | null;
  }>;

/** Collects console errors, page errors and CSP reports of a page into `problems`. */
export function watch(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  // Names what failed to load (the console's message does not). A request the page itself
  // abandoned by navigating (net::ERR_ABORTED) is not a failure.
  page.on('requestfailed', (r) => {
    const reason = r.failure()?.errorText ?? 'no reason';
    if (reason !== 'net::ERR_ABORTED') problems.push(`request failed: ${new URL(r.url()).pathname} (${reason})`);
  });
}

/**
 * WebSocket upgrades on `server` passed through to the relay's port, as raw TCP. `cut()` closes
 * every open connection and refuses new ones until `restore()`.
 */
export function relayThrough(server: Server, relayPort: number) {
  const open = new Set<Socket>();
  let cut = false;
  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    if (cut) {
      socket.destroy();
      return;
    }
    const upstream = createConnection(relayPort, '127.0.0.1');
    const pair = [socket, upstream];
    const drop = () => pair.forEach((s) => (s.destroy(), open.delete(s)));
    for (const s of pair) {
      open.add(s);
      s.on('error', drop).on('close', drop);
    }
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(lines.join('\r\n') + '\r\n\r\n');
    if (head.length) upstream.write(head);
    socket.pipe(upstream).pipe(socket);
  });
  return {
    cut() {
      cut = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    restore() {
      cut = false;
    },
  };
}

/** Stops what a phone sync test started (any of it, as far as its `before` got) and removes its folder. */
export async function stopPhoneSync(parts: { browser?: Browser; desktop?: Device; relay?: RelayProcess; site?: { server: Server }; dir?: string }): Promise<void> {
  const { browser, desktop, relay, site, dir } = parts;
  await browser?.close();
  await desktop?.stop();
  await relay?.kill();
  await new Promise((r) => (site ? site.server.close(r) : r(undefined)));
  if (dir) rmSync(dir, { recursive: true, force: true });
}

const DAY_MS = 86_400_000;

/**
 * Waits, only near midnight (UTC: the zone of the phones and desktops these tests start), until
 * the span from `backMs` ago to `aheadMs` from now lies within one day. A test that logs a meal
 * "now" and looks for it on Today failed once when a CI run crossed midnight: the meal was
 * yesterday's by the time the page looked. The phone's page and worker run on real time, so there
 * is no clock to set instead; the wait is at most `backMs` + `aheadMs`, in a run that meets midnight.
 */
export async function clearOfMidnight(backMs: number, aheadMs: number): Promise<void> {
  for (let now = Date.now(); ; now = Date.now()) {
    const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    if (now - backMs >= dayStart && now + aheadMs < dayStart + DAY_MS) return;
    const until = now - backMs < dayStart ? dayStart + backMs : dayStart + DAY_MS + backMs;
    await new Promise((r) => setTimeout(r, until - now + 50));
  }
}
