// Runs every test file with Node's test runner (TypeScript through tsx) and ends with the line
// "N passed, M failed" that CI reads. Usage: node test/run.mjs [folder-or-file ...]
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['test'];

function collect(path, out) {
  const full = join(root, path);
  if (statSync(full).isDirectory()) {
    for (const entry of readdirSync(full).sort()) collect(join(path, entry), out);
  } else if (/\.test\.ts$/.test(path)) {
    out.push(path);
  }
  return out;
}

const files = roots.flatMap((r) => collect(relative(root, join(root, r)), []));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const args = [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=2',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=./test/helpers/summary-reporter.mjs',
  '--test-reporter-destination=stdout',
  ...files,
];
const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
