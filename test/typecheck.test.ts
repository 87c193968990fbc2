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

test('the phone\'s worker typechecks (the service\'s modules in a browser worker)', () => typecheck('renderer/tsconfig.worker.json'));

// Electron's type definitions come with its optional npm package, not with its binary. Where npm
// dropped the package (the binary could not be downloaded) electron/typecheck.mjs skips the check
// with the reason and the command that installs the types, and so does this test; under CI (which
// installs the types, .ci/run) their absence is a failure.
test('the Electron shell typechecks against Electron\'s own types', (t) => {
  const r = spawnSync(process.execPath, [join(ROOT, 'electron', 'typecheck.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  assert.equal(r.status, 0, `electron/typecheck.mjs:\n${r.stdout}${r.stderr}`);
  const skipped = /^Skipped: (.*)$/m.exec(r.stdout);
  if (skipped) t.skip(skipped[1]);
});
