/**
 * The phone app's service worker: the app shell offline (issue 29 items 1 and 2).
 *
 * It precaches every file of build/phone, listed with its SHA-256 at build time
 * (scripts/phone-service-worker.ts puts the list in as `__CHYME_PRECACHE__`), into one cache named
 * after the list's hash. Any new build changes the list, so this script's bytes change, the browser
 * installs the new worker beside the old one, and the new cache is filled whole before the worker
 * can take over: an install that cannot fetch a file, or gets bytes that do not match the list,
 * fails, and the old worker and its cache stay. Once it activates, it deletes every older shell cache.
 *
 * The new worker waits: it never swaps files under a running page. The page offers a reload
 * (sw-register.ts) and asks it to take over with the message `skip-waiting`.
 *
 * It answers only the files of the list (cache first) and navigations to the app's page. Nothing
 * else is cached or answered here: the `/v1` routes never leave the page (its worker answers them),
 * and the relay's WebSocket does not pass through a service worker. All URLs are relative to the
 * registration's scope, so the same build works at / (the tests) and at /app/ (the relay).
 *
 * Built as a classic script (no imports) and typed without the WebWorker library, which cannot
 * share a project with the DOM's: the few service-worker types it uses are declared below.
 */

interface Precache {
  /** The list's hash: a new build, a new cache. */
  version: string;
  /** Paths relative to the scope, with each file's SHA-256 (hex). */
  files: { url: string; sha256: string }[];
}

declare const __CHYME_PRECACHE__: Precache;

interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface ServiceWorkerScope {
  readonly registration: { readonly scope: string };
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}

const PRECACHE = __CHYME_PRECACHE__;
const worker = self as unknown as ServiceWorkerScope;
const PREFIX = 'chyme-shell-';
const CACHE = `${PREFIX}${PRECACHE.version}`;
/** The page: what a navigation to the scope itself (/app/ on the relay) opens. */
const PAGE = 'phone.html';

const scopeUrl = (path: string) => new URL(path, worker.registration.scope).href;

function hex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function fill(): Promise<void> {
  const cache = await caches.open(CACHE);
  for (const file of PRECACHE.files) {
    const url = scopeUrl(file.url);
    // Hashed names under assets/ never change, so the HTTP cache may supply them; the rest
    // (the page, the manifest, the icons) are revalidated, and every body is checked anyway.
    const res = await fetch(url, { cache: file.url.startsWith('assets/') ? 'default' : 'no-cache', credentials: 'same-origin' });
    if (!res.ok) throw new Error(`${file.url}: ${res.status}`);
    const body = await res.arrayBuffer();
    const sha256 = hex(await crypto.subtle.digest('SHA-256', body));
    if (sha256 !== file.sha256) throw new Error(`${file.url}: not the file of this build (another deploy under way?)`);
    // The headers travel with the body: the database worker's script keeps its Content-Security-Policy, the WASM its type.
    await cache.put(url, new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers }));
  }
}

worker.addEventListener('install', (event) => {
  // A failed fill leaves a half-filled cache of this version; the next install starts it over.
  event.waitUntil(fill().catch(async (err: unknown) => {
    await caches.delete(CACHE);
    throw err;
  }));
});

worker.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      // The first install takes the page that registered it, so the code it loads later (the
      // Gut score screen) comes from the cache too. Later versions activate only when no page
      // runs the old one, or when the page asked for it (and then reloads).
      await worker.clients.claim();
    })(),
  );
});

worker.addEventListener('message', (event) => {
  if ((event.data as { type?: unknown } | null)?.type === 'skip-waiting') void worker.skipWaiting();
});

const precached = new Set(PRECACHE.files.map((f) => scopeUrl(f.url)));

worker.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  url.hash = '';
  // A navigation may carry a query; the files' URLs never do.
  if (request.mode === 'navigate') url.search = '';
  const cacheKey = request.mode === 'navigate' && url.href === worker.registration.scope ? scopeUrl(PAGE) : url.href;
  if (!precached.has(cacheKey)) return;
  event.respondWith(
    (async () => {
      const cached = await caches.match(cacheKey, { cacheName: CACHE });
      return cached ?? fetch(request);
    })(),
  );
});
