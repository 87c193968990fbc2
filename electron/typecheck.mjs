#!/usr/bin/env node
/**
 * The typecheck of the desktop shell (electron/) against Electron's own type definitions, which
 * come with the optional "electron" npm package. Where npm dropped that package (its binary could
 * not be downloaded) there is nothing to check against: this says so on a line starting
 * "Skipped: " with the reason and the command that installs the types, and exits 0, so that
 * `npm install` then `npm test` pass wherever `npm install` does. Under CI (CI set) the types must
 * be there (.ci/run installs them), and their absence fails.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ELECTRON_TYPES_COMMAND, electronTypesInstalled } from './electron-status.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (!electronTypesInstalled()) {
  const reason = `Electron's type definitions are not installed (npm dropped the optional "electron" package), so electron/ was not typechecked. To check it: ${ELECTRON_TYPES_COMMAND}`;
  if (process.env.CI) {
    console.error(`chyme: ${reason}`);
    process.exit(1);
  }
  console.log(`Skipped: ${reason}`);
  process.exit(0);
}
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
if (!existsSync(tsc)) throw new Error(`typescript is not installed: ${tsc}`);
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'electron', 'tsconfig.json'), '--noEmit'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
