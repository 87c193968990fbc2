#!/usr/bin/env node
/**
 * Runs after `npm install` / `npm ci` (package.json "postinstall") and says plainly what the
 * install left of Electron, because npm says nothing when an optional dependency fails: it just
 * drops it. Never fails the install. `npm start` repeats the same diagnosis (electron/start.mjs).
 */
import { electronStatus } from './electron-status.mjs';

const status = electronStatus();
if (status.kind === 'ready') {
  console.log(`chyme: Electron ${status.version} is installed; \`npm start\` opens the desktop app.`);
} else {
  console.log(`chyme: ${status.message}`);
}
