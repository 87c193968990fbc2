/**
 * What the phone's browser tests share: the built phone app (build/phone) served as the relay will
 * serve it (every file with the phone's CSP header, `.wasm` as application/wasm), and the page's
 * test surface (`window.chymeStorage`, renderer/src/phone/main.tsx).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PHONE_CONTENT_SECURITY_POLICY } from '../../server/content-security.js';
import type { CoreReady } from '../../renderer/src/phone/protocol.js';
import type { Device, RelayProcess } from '../helpers/sync.js';
import { CHROMIUM, ROOT } from './harness.js';

export const PHONE = join(ROOT, 'build/phone');

export const phoneSkip = !existsSync(CHROMIUM)
  ? `no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`
  : !existsSync(join(PHONE, 'phone.html'))
    ? 'build/phone is missing: run `npm run build:renderer` first'
    : false;

/** The media type each of the phone's files is served with, by extension. */
export const PHONE_FILE_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  // The food table: its bytes as they are (no Content-Encoding), which the worker unzips itself.
  '.gz': 'application/gzip',
  // The manifest and icons (renderer/phone-public), which the service worker precaches with the rest.
  '.webmanifest': 'application/manifest+json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * The phone's files with the headers the relay will serve them with (PHONE-PEER.md §E2), from
 * `root` (default build/phone) at `base` (the relay's is /app/); `requests` lists every path asked
 * for and `sent` the bytes of each answer's body.
 */
export function serveStatic({ root = PHONE, base = '/' } = {}): Promise<{ server: Server; url: string; requests: string[]; sent: { path: string; bytes: number }[] }> {
  const requests: string[] = [];
  const sent: { path: string; bytes: number }[] = [];
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    requests.push(path);
    const inBase = path.startsWith(base) ? path.slice(base.length - 1) : null;
    const file = inBase === null ? null : join(root, inBase === '/' ? 'phone.html' : inBase);
    if (file === null || !file.startsWith(root) || !existsSync(file) || !PHONE_FILE_TYPES[extname(file)]) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': PHONE_FILE_TYPES[extname(file)]!,
      'Content-Security-Policy': PHONE_CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    });
    const body = readFileSync(file);
    sent.push({ path, bytes: body.length });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, sent })));
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
