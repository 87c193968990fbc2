import type { SleepSession } from '../api/types.js';
import { dayOf, fmtDateTime, fmtTime, localParts, minutesOf } from './time.js';

/** The longest session the service accepts: an overlapping one ends at most this long after a new one. */
const MAX_SLEEP_MS = 24 * 3600_000;

/**
 * The days to list to find every session that overlaps [startMs, endMs): such a session ends after
 * `startMs` and, lasting at most 24 h, before `endMs` + 24 h; sessions are dated by the day they end.
 */
export function overlapSearchDays(startMs: number, endMs: number, tz: string, dayStart: string): { start_date: string; end_date: string } {
  const start = minutesOf(dayStart);
  return { start_date: dayOf(startMs, tz, start), end_date: dayOf(endMs + MAX_SLEEP_MS, tz, start) };
}

/** The first of `sessions` (by start) that overlaps [startMs, endMs), as the service decides it. */
export function findOverlap(sessions: readonly SleepSession[], startMs: number, endMs: number): SleepSession | undefined {
  return [...sessions]
    .sort((a, b) => Date.parse(a.start) - Date.parse(b.start))
    .find((s) => Date.parse(s.start) < endMs && Date.parse(s.end) > startMs);
}

/** "from Wed 25 Nov, 23:00 to Thu 26 Nov, 07:00" (the end's date only when it differs), in zone `tz`. */
export function sleepSpan(s: { start: string; end: string }, tz: string): string {
  const a = localParts(Date.parse(s.start), tz);
  const b = localParts(Date.parse(s.end), tz);
  const sameDay = a.year === b.year && a.month === b.month && a.day === b.day;
  return `from ${fmtDateTime(s.start, tz)} to ${sameDay ? fmtTime(s.end, tz) : fmtDateTime(s.end, tz)}`;
}

/** What to tell the person when the sleep they entered overlaps one already logged. */
export function overlapMessage(other: { start: string; end: string } | undefined, tz: string): string {
  return other
    ? `This overlaps the sleep already logged ${sleepSpan(other, tz)}. Change these times, or delete that one first.`
    : 'This overlaps a sleep already logged. Change these times, or delete that one first.';
}
