import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';

/**
 * The layering of docs/architecture.md, enforced: dependency-cruiser checks every import of the
 * service, the desktop shell and the renderer against .dependency-cruiser.cjs (no cycles, nothing
 * below api/ imports it, engine/ pure, db/ at the bottom, the renderer an HTTP client).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: Array<{ name: string }>;
}

test('no import breaks the layering rules, and there are no import cycles', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cli, '--config', '.dependency-cruiser.cjs', '--output-type', 'json', 'server', 'electron', 'renderer/src'],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  ).catch((err: { stdout?: string; stderr?: string }) => {
    // dependency-cruiser exits non-zero when it finds violations; the JSON is still on stdout.
    if (err.stdout) return { stdout: err.stdout };
    throw err;
  });
  const result = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  assert.ok(result.summary.totalCruised > 100, `cruised only ${result.summary.totalCruised} modules: is the config reading the sources?`);
  const lines = result.summary.violations.map(
    (v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' → ')})` : ''}`,
  );
  assert.deepEqual(lines, [], `layering violations (see docs/architecture.md):\n${lines.join('\n')}`);
});

/**
 * engine/ is pure functions of their inputs (docs/architecture.md): no module-level state that
 * calls fill, which would make an answer depend on what was asked before and outlive a restore.
 * Caches belong to the feature that owns the data (digestion/cache.ts) and are passed in. Caught
 * here: a top-level `let` or `var`, and a top-level collection made empty to be filled.
 */
test('engine/ keeps no module-level mutable state', () => {
  const dir = join(root, 'server', 'engine');
  // Zone look-ups (userDay and its kin), pure functions of (zone, day start, instant) and the
  // machine's tz database, memoised per zone: the same answer whoever asked first.
  const allowed = new Set(['days.ts: const memoTables = new Map<string, MemoTables>();']);
  const found = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((line) => /^(export )?(let|var) /.test(line) || /^(export )?const \w+(: [^=]+)? = (new (Map|Set|WeakMap|WeakSet|Array)\b[^(]*\(\)|\[\]|\{\});/.test(line))
        .map((line) => `${f}: ${line.trim()}`),
    )
    .filter((line) => !allowed.has(line));
  assert.deepEqual(found, []);
});
