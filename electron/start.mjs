#!/usr/bin/env node
/**
 * `npm start`: opens the desktop app where Electron is installed; otherwise runs the same service
 * headless (`chyme serve`) and prints the link that opens the app in a browser. Arguments after
 * `npm start --` are passed on (to Electron, or to `chyme serve`, e.g. `--port 7651`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronStatus } from './electron-status.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

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
const status = electronStatus();

if (status.kind === 'ready') {
  if (!built('build/server/cli/main.js') || !built('build/renderer/index.html')) step('npm run build', npm, ['run', 'build']);
  step('npm run build:electron', npm, ['run', 'build:electron']);
  step('node electron/build-native.mjs', process.execPath, [join(root, 'electron', 'build-native.mjs')]);
  console.error('Starting the Chyme desktop app…');
  runForeground(status.binary, [root, ...args]);
} else {
  // On stderr, and worded so no line but the real one starts with "App:": stdout carries only
  // chyme serve's two ready lines, for scripts to read.
  console.error(`Electron is unavailable here. ${status.message}`);
  console.error('Chyme starts in browser mode instead: it runs `chyme serve`; open the one-time app link it prints below in your browser.');
  if (!built('build/server/cli/main.js') || !built('build/renderer/index.html')) step('npm run build', npm, ['run', 'build']);
  runForeground(process.execPath, [join(root, 'build', 'server', 'cli', 'main.js'), 'serve', ...args]);
}
