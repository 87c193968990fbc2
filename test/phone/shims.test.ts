/**
 * The Node built-ins the phone's worker build replaces (renderer/src/phone/shims/): its SHA-256
 * gives Node's digests (a meal's ETag, event ids and the food table's version must be the same on
 * the phone as on a computer), over every length around the block boundaries and the food table.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { createHash as phoneHash } from '../../renderer/src/phone/shims/node-crypto.js';
import { FOOD_TABLE_FILE } from '../../server/foods/table-file.js';

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
