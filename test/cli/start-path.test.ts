/**
 * What every command compiles before it runs: the CLI bundle (build/server/cli/cli.js) and the
 * chunks it imports statically. Packages are bundled into it (server/cli/bundle.mjs), so a heavy
 * one imported statically anywhere in server/ lands on the start path of `chyme serve` unseen:
 * the MQTT client (~850 KB, loaded once a broker is set) and the MCP SDK must stay out of it, and
 * from node_modules it may load only better-sqlite3.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/cli.js';

const BUNDLE = join(ROOT, 'build', 'server', 'cli', 'cli.js');

/** The files loaded with `file` before any of its code runs, itself included, and what else they import. */
function staticGraph(file: string, files = new Map<string, string>(), specifiers = new Set<string>()): { files: Map<string, string>; specifiers: Set<string> } {
  if (files.has(file)) return { files, specifiers };
  const text = readFileSync(file, 'utf8');
  files.set(file, text);
  for (const m of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s*"([^"]+)";|^import\s*"([^"]+)";/gm)) {
    const spec = (m[1] ?? m[2])!;
    if (spec.startsWith('.')) staticGraph(join(dirname(file), spec), files, specifiers);
    else specifiers.add(spec);
  }
  return { files, specifiers };
}

test('the start path of the CLI loads no package but better-sqlite3, and neither the MQTT client nor the MCP SDK', { skip: existsSync(BUNDLE) ? false : 'not built' }, () => {
  const { files, specifiers } = staticGraph(BUNDLE);
  assert.deepEqual([...specifiers].filter((s) => !s.startsWith('node:')), ['better-sqlite3']);
  // esbuild heads each bundled file with its path.
  const bundled = [...files.values()].flatMap((text) => [...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]!));
  assert.ok(bundled.includes('express'), 'packages are bundled (express is)');
  for (const lazy of ['mqtt', 'mqtt-packet', '@modelcontextprotocol/sdk']) assert.ok(!bundled.includes(lazy), `${lazy} is on the start path`);
  assert.ok(!specifiers.has('mqtt'));
  // What the start path need not parse (server/cli/bundle.mjs, "lean-start"): iconv-lite's
  // encoding tables load on the first body decoded; of zod's locales only English is bundled.
  const paths = [...files.values()].flatMap((text) => [...text.matchAll(/^\/\/ (node_modules\/\S+)$/gm)].map((m) => m[1]!));
  assert.deepEqual(paths.filter((p) => p.startsWith('node_modules/iconv-lite/encodings/')), []);
  assert.deepEqual(paths.filter((p) => p.startsWith('node_modules/zod/v4/locales/')), ['node_modules/zod/v4/locales/en.js']);
});
