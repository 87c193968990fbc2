// The words around Today's "Ready for sleep" time: a time during the day is only the time after
// the last meal so far, and must say so instead of reading like a bedtime.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleepReadyAt, sleepReadyText, tonightText } from '../../renderer/src/lib/sleepReady.js';

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

// Once the person is up, the card speaks of tonight instead of the stomach's "ready since last night".
const tonight = {
  woke_at: '2026-11-23T06:40:00Z',
  woke_source: 'sleep' as const,
  bedtime_at: '2026-11-23T23:02:00Z',
  bedtime_source: 'learned' as const,
  finish_eating_by: '2026-11-23T20:02:00Z',
  sleep_ready_at: null,
};

test('in the morning: finish eating by the usual bedtime − 3 h, for that bedtime', () => {
  const t = tonightText(tonight, at('2026-11-23T07:00:00Z'), 'UTC')!;
  assert.equal(t.label, 'Finish eating by');
  assert.match(t.time, /^(20:02|8:02\s?PM)$/i);
  assert.equal(t.when, 'in 13 h 02 min');
  assert.match(t.note, /^For bed at (23:02|11:02\s?PM), your usual bedtime/i);
  assert.match(tonightText({ ...tonight, bedtime_source: 'default' }, at('2026-11-23T07:00:00Z'), 'UTC')!.note, /assumed until you log a night/);
});

test('no tonight text at night, once the time has passed, or when a meal keeps the stomach busy past the bedtime', () => {
  assert.equal(tonightText(null, at('2026-11-23T02:00:00Z'), 'UTC'), null);
  assert.equal(tonightText(tonight, at('2026-11-23T20:30:00Z'), 'UTC'), null);
  assert.equal(tonightText({ ...tonight, sleep_ready_at: '2026-11-23T23:40:00Z' }, at('2026-11-23T19:00:00Z'), 'UTC'), null);
  assert.ok(tonightText({ ...tonight, sleep_ready_at: '2026-11-23T12:00:00Z' }, at('2026-11-23T09:00:00Z'), 'UTC'));
});

test('once up, "ready for sleep" is never a time before getting up', () => {
  const w = { sleep_ready_at: '2026-11-22T23:02:00Z', tonight };
  assert.equal(sleepReadyAt(w), at(tonight.woke_at));
  assert.equal(sleepReadyAt({ ...w, tonight: null }), at('2026-11-22T23:02:00Z'));
  assert.equal(sleepReadyAt({ ...w, sleep_ready_at: '2026-11-23T23:30:00Z' }), at('2026-11-23T23:30:00Z'));
});
