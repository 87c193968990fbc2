// The meal form's wall-clock arithmetic (renderer/src/lib/time.ts): which instants a local time
// means when the clocks go back (two) or forward (none, and the two it may be taken for), and
// instants written at a stored offset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatAge, isoAtOffset, wallTimeInstants } from '../../renderer/src/lib/time.js';

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

test('a wall time the clocks repeat means two instants, earliest first; an ordinary one means one', () => {
  const repeated = wallTimeInstants('2026-10-25', 2 * 60 + 30, 'Europe/Berlin');
  assert.deepEqual(repeated.instants.map(iso), ['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z']);
  assert.deepEqual(repeated.skipped, []);
  assert.deepEqual(wallTimeInstants('2026-10-25', 3 * 60 + 30, 'Europe/Berlin').instants.map(iso), ['2026-10-25T02:30:00Z']);
  assert.deepEqual(wallTimeInstants('2026-11-01', 60 + 30, 'America/New_York').instants.map(iso), ['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z']);
});

test('a wall time the clocks skip means none, and may be read with the offset before or after the change', () => {
  const skipped = wallTimeInstants('2026-03-29', 2 * 60 + 30, 'Europe/Berlin');
  assert.deepEqual(skipped.instants, []);
  // 02:30 at +02:00 is 01:30 before the change; at +01:00 it is 03:30 after it.
  assert.deepEqual(skipped.skipped.map(iso), ['2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z']);
});

test('an instant is written back at the offset it was stored with', () => {
  assert.equal(isoAtOffset(Date.parse('2026-11-23T02:00:00Z'), -300), '2026-11-22T21:00:00-05:00');
  assert.equal(isoAtOffset(Date.parse('2026-10-25T00:30:00Z'), 120), '2026-10-25T02:30:00+02:00');
  assert.equal(isoAtOffset(Date.parse('2026-06-01T12:00:00Z'), 330), '2026-06-01T17:30:00+05:30');
});

test('an age reads in minutes, then hours up to two days, then days; a clock a little behind reads "just now"', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const ago = (min: number) => formatAge(now - min * 60_000, now);
  assert.equal(ago(0), 'just now');
  assert.equal(ago(-3), 'just now'); // the stamp is from a device whose clock runs ahead
  assert.equal(ago(1), '1 minute ago');
  assert.equal(ago(59), '59 minutes ago');
  assert.equal(ago(60), '1 hour ago');
  assert.equal(ago(47 * 60), '47 hours ago');
  assert.equal(ago(48 * 60), '2 days ago');
});
