/**
 * What this install has of Electron, in words a person can act on. Shared by the postinstall
 * check (electron/install-check.mjs) and `npm start` (electron/start.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

/** The one command that installs Electron's npm package (and its type definitions) without its binary. */
export const ELECTRON_TYPES_COMMAND = 'ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm install';

/** Whether Electron's type definitions are installed (they come with its npm package, not its binary). */
export function electronTypesInstalled() {
  return existsSync(join(root, 'node_modules', 'electron', 'electron.d.ts'));
}

/**
 * - ready: the package and its binary are there.
 * - no-binary: the package (and its type definitions) are there, the binary is not: the desktop
 *   app cannot start, `npm test` still typechecks electron/.
 * - no-package: npm dropped the optional package (its binary download failed): no desktop app,
 *   and the typecheck of electron/ is skipped until its types are installed.
 */
export function electronStatus() {
  const pkgPath = join(root, 'node_modules', 'electron', 'package.json');
  if (!existsSync(pkgPath)) {
    return {
      kind: 'no-package',
      message:
        'Electron is NOT installed: npm dropped the optional "electron" package because its binary could not be downloaded. ' +
        '`npm start` will run Chyme in browser mode, and `npm test` skips the typecheck of electron/ (it needs Electron\'s type definitions). ' +
        `To get the types without the binary: ${ELECTRON_TYPES_COMMAND}. To get the desktop app: npm install with network access to Electron's downloads.`,
    };
  }
  const version = JSON.parse(readFileSync(pkgPath, 'utf8')).version;
  let binary = null;
  try {
    const path = require('electron');
    binary = typeof path === 'string' && existsSync(path) ? path : null;
  } catch {
    binary = null;
  }
  if (!binary) {
    return {
      kind: 'no-binary',
      version,
      message:
        `Electron ${version}'s type definitions are installed but its binary is not (the download was skipped or failed). ` +
        '`npm start` runs Chyme in browser mode; `npm test` still typechecks electron/. ' +
        'To get the desktop app: node node_modules/electron/install.js (needs network access to Electron\'s downloads).',
    };
  }
  return { kind: 'ready', version, binary };
}
