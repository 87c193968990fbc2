import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from './helpers/cli.js';

const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

function typecheck(project: string): void {
  const r = spawnSync(process.execPath, [tsc, '-p', project, '--noEmit'], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  assert.equal(r.status, 0, `${project}:\n${r.stdout}${r.stderr}`);
}

test('server, tests and bench typecheck under strict TypeScript', () => typecheck('tsconfig.json'));

test('the renderer typechecks', { skip: !existsSync(join(ROOT, 'renderer', 'tsconfig.json')) }, () => typecheck('renderer/tsconfig.json'));

// Never skipped: Electron's type definitions come with its npm package, not with its binary, so a
// machine that cannot download the binary still checks the shell (see electron/install-check.mjs).
test('the Electron shell typechecks against Electron\'s own types', () => {
  assert.ok(
    existsSync(join(ROOT, 'node_modules', 'electron', 'electron.d.ts')),
    'Electron\'s type definitions are missing: npm dropped the optional "electron" package. Run ELECTRON_SKIP_BINARY_DOWNLOAD=1 npm install.',
  );
  typecheck('electron/tsconfig.json');
});
