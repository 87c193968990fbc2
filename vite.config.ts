import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin, type UserConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { shippedFoodTable } from './server/foods/table-file.js';
import { writeServiceWorker } from './scripts/phone-service-worker.js';

/**
 * The dev server injects an inline React Refresh preamble, inserts CSS as <style> elements and
 * talks to its HMR websocket; the production CSP in index.html forbids all three. Relax it for `vite` (serve) only; builds keep it.
 */
const devCsp: Plugin = {
  name: 'chyme-dev-csp',
  apply: 'serve',
  transformIndexHtml: (html) =>
    html
      .replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
      .replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
      .replace("connect-src 'self'", "connect-src 'self' ws: wss:"),
};

const shim = (name: string) => fileURLToPath(new URL(`./renderer/src/phone/shims/${name}`, import.meta.url));

/**
 * The service's modules in the phone's worker: `server/paths.ts` (which finds the package's files
 * on disk) becomes the phone's, whatever relative path imports it.
 */
const phonePaths: Plugin = {
  name: 'chyme-phone-paths',
  enforce: 'pre',
  async resolveId(source, importer, options) {
    if (!source.endsWith('/paths.js') || !importer) return null;
    const resolved = await this.resolve(source.replace(/\.js$/, '.ts'), importer, { ...options, skipSelf: true });
    return resolved?.id === fileURLToPath(new URL('./server/paths.ts', import.meta.url)) ? shim('paths.ts') : null;
  },
};

/**
 * `vite build --mode phone`: the phone app (issue 29): renderer/phone.html, the desktop's React
 * app with the phone's transport, and the worker that runs the service's routes over SQLite-WASM
 * (renderer/src/phone/core-worker.ts), into build/phone/, apart from the desktop's bundle (which
 * neither loads nor ships any of it). The service's modules import a few Node built-ins; the
 * worker gets small browser versions of them (renderer/src/phone/shims/): SHA-256 in JS for
 * node:crypto's createHash, and no file system, since the worker fetches or bundles the files
 * it needs (the food table, the search words).
 */
/**
 * Last in the phone's build, once every file is written: `sw.js`, the service worker that
 * precaches them all (renderer/src/phone/sw.ts, scripts/phone-service-worker.ts).
 */
let phoneOutDir = '';
const phoneServiceWorker: Plugin = {
  name: 'chyme-phone-service-worker',
  apply: 'build',
  configResolved(config) {
    phoneOutDir = resolve(config.root, config.build.outDir);
  },
  closeBundle: {
    order: 'post',
    async handler() {
      await writeServiceWorker(phoneOutDir);
    },
  },
};

const phone: UserConfig = {
  root: 'renderer',
  base: './',
  plugins: [react(), phonePaths, phoneServiceWorker],
  resolve: {
    alias: [
      { find: 'node:crypto', replacement: shim('node-crypto.ts') },
      { find: 'node:fs', replacement: shim('node-fs.ts') },
      { find: 'node:os', replacement: shim('node-os.ts') },
      { find: 'node:path', replacement: shim('node-path.ts') },
      { find: 'node:zlib', replacement: shim('node-zlib.ts') },
      // Sync (server/sync/) in the worker: the browser's WebSocket, Automerge's wasm as a file.
      { find: /^ws$/, replacement: shim('ws.ts') },
      { find: /^@automerge\/automerge$/, replacement: shim('automerge.ts') },
    ],
  },
  define: {
    // The worker fetches the food table only when its database lacks this version (core-worker.ts).
    __FOOD_TABLE_VERSION__: JSON.stringify(shippedFoodTable().version),
    __CHYME_VERSION__: JSON.stringify((JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string }).version),
    // What the service's modules read of `process` at import time (zone files, the OS family).
    'process.platform': JSON.stringify('browser'),
    'process.env.TZ': 'undefined',
    'process.env.TZDIR': 'undefined',
    'process.env.CHYME_SYNC_DEBUG': 'undefined',
  },
  // The manifest and icons that make the app installable; apart from renderer/public, which the desktop would ship too.
  publicDir: 'phone-public',
  build: {
    outDir: '../build/phone',
    emptyOutDir: true,
    target: 'chrome120',
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: { input: fileURLToPath(new URL('./renderer/phone.html', import.meta.url)) },
  },
  // The worker imports modules (SQLite-WASM is an ES module); module workers are Chrome 80+, Safari 15+.
  worker: { format: 'es', plugins: () => [phonePaths] },
};

// The renderer is a static bundle served by `chyme serve` (browser mode) and loaded by Electron from
// the same in-process server, so every URL in it is relative: base './' and same-origin `/v1` calls.
const desktop: UserConfig = {
  root: 'renderer',
  base: './',
  plugins: [react(), devCsp],
  build: {
    outDir: '../build/renderer',
    emptyOutDir: true,
    target: 'chrome120',
    // Chromium and Electron support modulepreload natively; the polyfill would be an extra script.
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npm run dev:renderer` proxies the API, and the one-time `/?token=` sign-in, to a running
    // `chyme serve` (CHYME_API, default http://127.0.0.1:7650): open the App link with the Vite
    // port instead of the server's. The Host header is kept, so the service's Host and Origin
    // checks see the page's own origin.
    proxy: Object.fromEntries(
      ['/v1', '^/\\?token='].map((key) => [key, { target: process.env.CHYME_API ?? 'http://127.0.0.1:7650', changeOrigin: false }]),
    ),
  },
};

export default defineConfig(({ mode }) => (mode === 'phone' ? phone : desktop));
