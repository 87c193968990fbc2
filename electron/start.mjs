#!/usr/bin/env node
/**
 * `npm start`: opens the desktop app where Electron is installed; otherwise runs the same service
 * headless (`chyme serve`) and prints the link that opens the app in a browser. Arguments after
 * `npm start --` are passed on (to Electron, or to `chyme serve`, e.g. `--port 7651`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Path of the Electron binary when it is really installed (the npm package alone is not enough). */
function electronBinary() {
  try {
    const path = require('electron');
    return typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

function step(label, cmd, cmdArgs) {
  console.error(`> ${label}`);
  // Build output goes to stderr too: stdout is kept for the ready lines.
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: ['inherit', 2, 2], shell: process.platform === 'win32' });
  if (r.status !== 0) {
    console.error(`npm start: "${label}" failed.`);
    process.exit(r.status ?? 1);
  }
}

/** Runs a child until it exits, passing Ctrl-C / SIGTERM on to it so it can shut down cleanly. */
function runForeground(cmd, cmdArgs) {
  const child = spawn(cmd, cmdArgs, { cwd: root, stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

const built = (file) => existsSync(join(root, file));
const electron = electronBinary();

if (electron) {
  if (!built('build/server/cli/main.js') || !built('build/renderer/index.html')) step('npm run build', npm, ['run', 'build']);
  step('npm run build:electron', npm, ['run', 'build:electron']);
  step('node electron/build-native.mjs', process.execPath, [join(root, 'electron', 'build-native.mjs')]);
  console.error('Starting the Chyme desktop app…');
  runForeground(electron, [root, ...args]);
} else {
  // On stderr, and worded so no line but the real one starts with "App:": stdout carries only
  // chyme serve's two ready lines, for scripts to read.
  console.error('Electron is unavailable here (its binary is not installed), so Chyme starts in browser mode instead:');
  console.error('it runs `chyme serve`; open the one-time app link it prints below in your browser.');
  if (!built('build/server/cli/main.js') || !built('build/renderer/index.html')) step('npm run build', npm, ['run', 'build']);
  runForeground(process.execPath, [join(root, 'build', 'server', 'cli', 'main.js'), 'serve', ...args]);
}
