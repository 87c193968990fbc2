#!/usr/bin/env node
/**
 * Builds better-sqlite3 for Electron's ABI into electron/native/better_sqlite3.node, which the
 * Electron main process passes to the service as `nativeBinding`. The copy in node_modules stays
 * built for Node, so `npm test` and `chyme serve` keep working.
 *
 * Where the Electron binary is not installed this does nothing (exit 0). Otherwise it works on a
 * temporary copy of the better-sqlite3 package: first a prebuilt binary for this Electron version
 * (prebuild-install, which better-sqlite3 already depends on), else a compile against Electron's
 * headers with node-gyp (the one npm ships). Set CHYME_BUILD_NATIVE_FORCE=1 to build even without
 * the Electron binary (for packaging on another machine).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'electron', 'native');
const outFile = join(outDir, 'better_sqlite3.node');

function electronBinary() {
  try {
    const path = require('electron');
    return typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    return null;
  }
}

const binary = electronBinary();
if (!binary && process.env.CHYME_BUILD_NATIVE_FORCE !== '1') {
  console.log('build-native: the Electron binary is not installed; skipping (tests use the Node build of better-sqlite3).');
  process.exit(0);
}

const electronVersion = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
const sqliteDir = dirname(require.resolve('better-sqlite3/package.json'));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')).version;
const stampFile = join(outDir, 'VERSION.json');
const stamp = { electron: electronVersion, 'better-sqlite3': sqliteVersion, platform: process.platform, arch: process.arch };

if (existsSync(outFile) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === JSON.stringify(stamp)) {
  console.log(`build-native: ${outFile} is up to date (Electron ${electronVersion}).`);
  process.exit(0);
}

const work = mkdtempSync(join(tmpdir(), 'chyme-native-'));
try {
  const pkg = join(work, 'better-sqlite3');
  cpSync(sqliteDir, pkg, { recursive: true, filter: (src) => !src.startsWith(join(sqliteDir, 'build')) });

  const run = (cmd, args) => {
    console.log(`build-native: ${[cmd, ...args].join(' ')}`);
    return spawnSync(cmd, args, { cwd: pkg, stdio: 'inherit', env: { ...process.env } }).status === 0;
  };

  const prebuild = join(root, 'node_modules', 'prebuild-install', 'bin.js');
  let ok =
    existsSync(prebuild) &&
    run(process.execPath, [prebuild, '--runtime', 'electron', '--target', electronVersion, '--arch', process.arch, '--platform', process.platform]);

  if (!ok) {
    // npm bundles node-gyp; compile against Electron's headers.
    const npmDir = dirname(dirname(process.env.npm_execpath ?? join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js')));
    const gyp = [process.env.npm_config_node_gyp, join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')].find((p) => p && existsSync(p));
    ok =
      Boolean(gyp) &&
      run(process.execPath, [gyp, 'rebuild', '--release', `--target=${electronVersion}`, `--arch=${process.arch}`, '--dist-url=https://electronjs.org/headers', '--runtime=electron']);
  }

  const built = join(pkg, 'build', 'Release', 'better_sqlite3.node');
  if (!ok || !existsSync(built)) {
    console.error('build-native: could not get better-sqlite3 for Electron: no prebuilt binary could be downloaded and compiling against Electron headers failed (see above).');
    process.exit(1);
  }
  mkdirSync(outDir, { recursive: true });
  copyFileSync(built, outFile);
  writeFileSync(stampFile, JSON.stringify(stamp));
  console.log(`build-native: wrote ${outFile} for Electron ${electronVersion}.`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
