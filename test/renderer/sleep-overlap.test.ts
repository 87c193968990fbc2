// The overlapping-sleep error in the person's zone (issue 19 item 13): the service names the other
// session in UTC for API clients; the app finds that session and says its times in the user's zone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findOverlap, overlapMessage, overlapSearchDays, sleepSpan } from '../../renderer/src/lib/sleep.js';
import { dayOf } from '../../server/time/tz.js';

const session = (start: string, end: string) => ({ start, end }) as Parameters<typeof findOverlap>[0][number];
const hm = (iso: string, tz: string) => new Intl.DateTimeFormat(undefined, { timeZone: tz, hour: 'numeric', minute: '2-digit' }).format(Date.parse(iso));

test('the other session’s times are said in the person’s zone, for zones east, west and half-hour off UTC', () => {
  const other = { start: '2026-11-25T22:00:00Z', end: '2026-11-26T06:00:00Z' };
  for (const tz of ['Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'UTC']) {
    const text = overlapMessage(other, tz);
    assert.ok(text.includes(hm(other.start, tz)), `${tz}: ${text}`);
    assert.ok(text.includes(hm(other.end, tz)), `${tz}: ${text}`);
    assert.doesNotMatch(text, /\d{4}-\d{2}-\d{2}T|Z\b|sleep_/, `${tz}: ${text}`);
  }
  // The end's date is said only when it is another day in that zone.
  assert.doesNotMatch(sleepSpan({ start: '2026-11-26T01:00:00Z', end: '2026-11-26T05:00:00Z' }, 'Europe/Berlin'), /to \D*\d+ \D+, /);
  assert.match(sleepSpan(other, 'Europe/Berlin'), /to .*26.*, /);
  assert.match(overlapMessage(undefined, 'Europe/Berlin'), /overlaps a sleep already logged/);
});

test('the days listed hold every session that can overlap, and the overlap is decided as the service decides it', () => {
  const tz = 'Europe/Berlin';
  const start = Date.parse('2026-11-25T22:00:00Z');
  const end = Date.parse('2026-11-26T06:00:00Z');
  const days = overlapSearchDays(start, end, tz, '00:00');
  // The earliest overlapping session ends just after `start`; the latest starts just before `end`
  // and lasts 24 h. Both are dated by the day they end.
  for (const endsAt of [start + 60_000, end - 60_000 + 24 * 3600_000]) {
    const d = dayOf(endsAt, tz, 0);
    assert.ok(d >= days.start_date && d <= days.end_date, `${d} in ${JSON.stringify(days)}`);
  }
  const list = [
    session('2026-11-25T12:00:00Z', '2026-11-25T22:00:00Z'), // ends as the new one starts: no overlap
    session('2026-11-26T05:00:00Z', '2026-11-26T09:00:00Z'),
    session('2026-11-25T21:00:00Z', '2026-11-25T23:00:00Z'),
  ];
  assert.equal(findOverlap(list, start, end)?.start, '2026-11-25T21:00:00Z');
  assert.equal(findOverlap(list.slice(0, 1), start, end), undefined);
});
