import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The renderer is a static bundle served by `chyme serve` (browser mode) and loaded by Electron from
// the same in-process server, so every URL in it is relative: base './' and same-origin `/v1` calls.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
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
    // `npm run dev:renderer` proxies the API to a running `chyme serve` (default port 7650).
    proxy: { '/v1': { target: process.env.CHYME_API ?? 'http://127.0.0.1:7650', changeOrigin: false } },
  },
});
