import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin, type UserConfig } from 'vite';
import react from '@vitejs/plugin-react';

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

/**
 * `vite build --mode phone`: the phone app (issue 29), for now its storage spike: renderer/phone.html,
 * its page script and the storage worker with SQLite-WASM, into build/phone/, apart from the
 * desktop's bundle (which neither loads nor ships it).
 */
const phone: UserConfig = {
  root: 'renderer',
  base: './',
  // The manifest and icons that make the app installable; apart from renderer/public, which the desktop would ship too.
  publicDir: 'phone-public',
  build: {
    outDir: '../build/phone',
    emptyOutDir: true,
    target: 'chrome120',
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
    rolldownOptions: { input: fileURLToPath(new URL('./renderer/phone.html', import.meta.url)) },
  },
  // The worker imports modules (SQLite-WASM is an ES module); module workers are Chrome 80+, Safari 15+.
  worker: { format: 'es' },
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
