/**
 * The MCP SDK loads on first use (server/mcp/sdk.ts): importing it takes longer than the whole
 * cold start, so the service and every CLI command must start without it. Only `import type`
 * and dynamic `import()` of it may appear in server/; the CLI bundle, which requires every
 * statically imported package it leaves out at its top, must require none of it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/cli.js';

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Static imports and re-exports of the SDK that are not type-only. */
const STATIC = /^\s*(import|export)\s+(?!type\b)[^;]*?from\s+['"]@modelcontextprotocol\/sdk[^'"]*['"]/gm;

test('server/ imports the MCP SDK only as types or through import()', () => {
  const found = sources(join(ROOT, 'server')).flatMap((file) => [...readFileSync(file, 'utf8').matchAll(STATIC)].map((m) => `${relative(ROOT, file)}: ${m[0].trim()}`));
  assert.deepEqual(found, []);
});

test('the built CLI bundle loads the MCP SDK only through import()', { skip: existsSync(join(ROOT, 'build/server/cli/cli.cjs')) ? false : 'not built' }, () => {
  // CommonJS (server/cli/bundle.mjs): a static import of a package left out of it is a require().
  const bundle = readFileSync(join(ROOT, 'build/server/cli/cli.cjs'), 'utf8');
  assert.deepEqual([...bundle.matchAll(/\brequire\("@modelcontextprotocol\/sdk[^"]*"\)/g)].map((m) => m[0]), []);
  // import() in the bundle is load-cli.ts's importer (server/cli/bundle.mjs).
  assert.match(bundle, /__chymeImport\("@modelcontextprotocol\/sdk\/server\/index\.js"\)/);
});
