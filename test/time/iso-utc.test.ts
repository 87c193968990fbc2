import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isoUtc } from '../../server/time/tz.js';

/** What isoUtc has always meant: the instant floored to its second, as toISOString writes it, without milliseconds. */
const reference = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

test('isoUtc writes what toISOString writes, to the second, for any instant', () => {
  for (const ms of [0, 999, 1000, 86_399_999, 86_400_000, Date.UTC(2026, 10, 22, 8, 30, 0), Date.UTC(2024, 1, 29, 23, 59, 59, 999), -1, -86_400_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15]) {
    assert.equal(isoUtc(ms), reference(ms), String(ms));
  }
  fc.assert(
    fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => isoUtc(ms) === reference(ms)),
    { numRuns: 20_000 },
  );
  // Instants of recent years, many on the same days (the per-day cache's case).
  fc.assert(
    fc.property(fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }), (ms) => isoUtc(ms) === reference(ms)),
    { numRuns: 20_000 },
  );
  assert.throws(() => isoUtc(Number.NaN), RangeError);
});
