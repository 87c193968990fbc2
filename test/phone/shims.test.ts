/**
 * The Node built-ins the phone's worker build replaces (renderer/src/phone/shims/): its SHA-256
 * gives Node's digests (a meal's ETag, event ids and the food table's version must be the same on
 * the phone as on a computer), over every length around the block boundaries and the food table.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { createHash as phoneHash } from '../../renderer/src/phone/shims/node-crypto.js';
import { FOOD_TABLE_FILE } from '../../server/foods/table-file.js';

const PHONE_BUILD = fileURLToPath(new URL('../../build/phone', import.meta.url));

test('the worker’s SHA-256 equals Node’s, as hex, base64url and bytes', () => {
  for (let length = 0; length <= 300; length++) {
    const bytes = randomBytes(length);
    assert.equal(phoneHash('sha256').update(bytes).digest('hex'), createHash('sha256').update(bytes).digest('hex'), `${length} bytes`);
  }
  const text = 'evt\0{"a":"é ✓"}\0';
  assert.equal(phoneHash('sha256').update(text).update('x').digest('base64url'), createHash('sha256').update(text).update('x').digest('base64url'));
  assert.deepEqual([...phoneHash('sha256').update(text).digest()], [...createHash('sha256').update(text).digest()]);
  const table = readFileSync(FOOD_TABLE_FILE);
  assert.equal(phoneHash('sha256').update(table).digest('hex'), createHash('sha256').update(table).digest('hex'), 'the food table’s version');
  assert.throws(() => phoneHash('md5'), /not available/);
});

test('the phone’s scripts use no Node Buffer (the worker has none: a call throws "Buffer is not defined")', (t) => {
  const assets = join(PHONE_BUILD, 'assets');
  if (!existsSync(assets)) return t.skip('no phone build (npm run build)');
  const found: string[] = [];
  for (const file of readdirSync(assets).filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(join(assets, file), 'utf8');
    // The global itself, not a guarded property (`g.Buffer !== undefined && g.Buffer.isBuffer(x)`).
    for (const m of code.matchAll(/(?<![.\w$])Buffer\.\w+/g)) found.push(`${file}: …${code.slice(Math.max(0, m.index - 60), m.index + 40)}…`);
  }
  assert.deepEqual(found, []);
});
