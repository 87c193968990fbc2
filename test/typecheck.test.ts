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

test('the Electron shell typechecks against Electron\'s own types', { skip: !existsSync(join(ROOT, 'node_modules', 'electron', 'electron.d.ts')) || !existsSync(join(ROOT, 'electron', 'tsconfig.json')) }, () =>
  typecheck('electron/tsconfig.json'),
);
