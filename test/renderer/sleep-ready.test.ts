// The words around Today's "Ready for sleep" time: a time during the day is only the time after
// the last meal so far, and must say so instead of reading like a bedtime.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleepReadyText } from '../../renderer/src/lib/sleepReady.js';

const at = (isoLocal: string) => Date.parse(isoLocal);

test('after breakfast, the time reads as this morning and explains it holds only if nothing more is eaten', () => {
  const t = sleepReadyText(at('2026-11-23T10:28:00Z'), at('2026-11-23T07:40:00Z'), 'UTC');
  assert.match(t.when, /^this morning, in 2 h 48 min$/);
  assert.match(t.note, /if you eat nothing more today/);
});

test('after lunch it is this afternoon; after dinner it is tonight, also past midnight', () => {
  assert.match(sleepReadyText(at('2026-11-23T15:35:00Z'), at('2026-11-23T13:10:00Z'), 'UTC').when, /^this afternoon, in /);
  const evening = sleepReadyText(at('2026-11-23T22:10:00Z'), at('2026-11-23T19:30:00Z'), 'UTC');
  assert.match(evening.when, /^tonight, in /);
  assert.doesNotMatch(evening.note, /nothing more today/);
  assert.match(sleepReadyText(at('2026-11-24T01:30:00Z'), at('2026-11-23T22:30:00Z'), 'UTC').when, /^tonight, in 3 h/);
});

test('the day is the user’s calendar day in their zone', () => {
  // 23:30 UTC is 00:30 the next day in Berlin: still "tonight" there, not "tomorrow".
  assert.match(sleepReadyText(at('2026-11-23T23:30:00Z'), at('2026-11-23T21:00:00Z'), 'Europe/Berlin').when, /^tonight, in 2 h 30 min$/);
  // 8:00 the next day is tomorrow.
  assert.match(sleepReadyText(at('2026-11-24T08:00:00Z'), at('2026-11-23T21:00:00Z'), 'UTC').when, /^tomorrow, in /);
});

test('once passed, it is now, since the time', () => {
  const t = sleepReadyText(at('2026-11-23T10:28:00Z'), at('2026-11-23T12:00:00Z'), 'UTC');
  assert.equal(t.time, 'Now');
  assert.match(t.when, /^since 10:28/);
});
