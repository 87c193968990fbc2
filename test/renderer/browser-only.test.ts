// The renderer's types come from the server's schemas through type-only imports, and those server
// modules reference Node's type definitions, so the renderer's typecheck also knows Node's globals
// (`process`, `Buffer`…): tsc would no longer catch them in browser code. This check does.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'renderer/src');
const NODE_GLOBALS = /\b(process|Buffer|require|__dirname|__filename|global|setImmediate)\b(?=\s*[.(])/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The code of a file without its comments and string literals, line by line. */
function codeLines(text: string): string[] {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .split('\n')
    .map((line) => line.replace(/\/\/.*$/, '').replace(/(['"`])(?:\\.|(?!\1).)*\1/g, '""'));
}

test('renderer code uses no Node globals (it runs in a browser and in Electron’s sandboxed page)', () => {
  const found: string[] = [];
  for (const file of sources(SRC)) {
    codeLines(readFileSync(file, 'utf8')).forEach((line, i) => {
      if (NODE_GLOBALS.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});
