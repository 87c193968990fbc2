/**
 * Time in the user's zone. Days and wall-clock times are computed with the service's own zone
 * arithmetic (server/time/tz.ts is pure Intl code, shared rather than rewritten), using the time
 * zone and day start from the user's settings rather than the machine's.
 */
import { addDays, dayBounds, dayOf, localParts, localTimeToInstant, offsetMinutes, parseClock } from '../../../server/time/tz.js';

export { addDays, dayBounds, dayOf, localParts, localTimeToInstant, offsetMinutes, parseClock };

/**
 * The service's clock. Normally the same machine's clock, but the service may run with an injected
 * clock (tests) or on another machine (browser mode over LAN), so "now" follows the `generated_at`
 * and `calculated_at` stamps it sends.
 */
let offsetMs = 0;
const clockListeners = new Set<() => void>();
export const clock = {
  now: () => Date.now() + offsetMs,
  /** Aligns with a server timestamp that was generated just before it was received. */
  sync(serverIso: string | undefined | null) {
    if (!serverIso) return;
    const t = Date.parse(serverIso);
    if (Number.isNaN(t)) return;
    const next = t - Date.now();
    if (Math.abs(next - offsetMs) > 1500) {
      offsetMs = next;
      for (const fn of clockListeners) fn();
    }
  },
  /** Called when the service's clock turns out to differ from what was assumed. */
  onChange(fn: () => void): () => void {
    clockListeners.add(fn);
    return () => clockListeners.delete(fn);
  },
};

export function minutesOf(hhmm: string): number {
  try {
    return parseClock(hhmm);
  } catch {
    return 0;
  }
}

export function todayIn(tz: string, dayStart: string): string {
  return dayOf(clock.now(), tz, minutesOf(dayStart));
}

const fmtCache = new Map<string, Intl.DateTimeFormat>();
function fmt(tz: string, opts: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = tz + JSON.stringify(opts);
  let f = fmtCache.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(undefined, { timeZone: tz, ...opts });
    fmtCache.set(key, f);
  }
  return f;
}

function toMs(t: string | number | Date): number {
  return typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : t.getTime();
}

/** "14:05" (or "2:05 PM", per locale) in the user's zone. */
export function fmtTime(t: string | number | Date, tz: string): string {
  return fmt(tz, { hour: 'numeric', minute: '2-digit' }).format(toMs(t));
}

/**
 * A meal's time as it was lived: on the clock where it was eaten (its `utc_offset_min`), which is
 * also what its `day` was read from (docs/api.md, "A meal's day: one rule"). Other instants (now,
 * the digestive state's, sleep) are shown on the zone's clock.
 */
export interface LivedAt {
  timestamp: string;
  utc_offset_min: number;
}

/** How far the clock where a meal was eaten is from the zone's clock at that instant (ms). */
export function livedShiftMs(meal: LivedAt, tz: string): number {
  const ms = Date.parse(meal.timestamp);
  return (meal.utc_offset_min - offsetMinutes(ms, tz)) * 60_000;
}

/** "UTC+1", "UTC−5:30". */
export function fmtOffset(offsetMin: number): string {
  const a = Math.abs(offsetMin);
  return `UTC${offsetMin < 0 ? '−' : '+'}${Math.floor(a / 60)}${a % 60 ? `:${String(a % 60).padStart(2, '0')}` : ''}`;
}

/** "" when a meal was eaten on the zone's clock, else " (UTC+1)": the clock its time is read on. */
export function livedOffsetNote(meal: LivedAt, tz: string): string {
  return livedShiftMs(meal, tz) === 0 ? '' : ` (${fmtOffset(meal.utc_offset_min)})`;
}

/** "00:20", or "00:20 (UTC+1)" for a meal eaten on another clock than the zone's. */
export function fmtMealTime(meal: LivedAt, tz: string): string {
  return fmtTime(Date.parse(meal.timestamp) + meal.utc_offset_min * 60_000, 'UTC') + livedOffsetNote(meal, tz);
}

/** "Mon 12 Jan, 14:05". */
export function fmtDateTime(t: string | number | Date, tz: string): string {
  return fmt(tz, { weekday: 'short', day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' }).format(toMs(t));
}

/** A YYYY-MM-DD day as "Monday 12 January" (long) or "Mon 12 Jan". */
export function fmtDay(day: string, style: 'long' | 'short' = 'short'): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return fmt('UTC', { weekday: style, day: 'numeric', month: style }).format(Date.UTC(y, m - 1, d, 12));
}

/**
 * A time that says its day when that is not today's (`now`'s, in `tz`): "7:32 PM",
 * "7:32 PM yesterday", "7:33 AM tomorrow", "7:32 PM, Mon 12 Jan".
 */
export function fmtTimeOnDay(t: string | number | Date, now: number, tz: string): string {
  const time = fmtTime(t, tz);
  const day = dayOf(toMs(t), tz);
  const today = dayOf(now, tz);
  if (day === today) return time;
  const label = dayLabel(day, today);
  return /^(Yesterday|Tomorrow)$/.test(label) ? `${time} ${label.toLowerCase()}` : `${time}, ${label}`;
}

/** Relative label for a day: Today / Yesterday / the date. */
export function dayLabel(day: string, today: string): string {
  if (day === today) return 'Today';
  if (day === addDays(today, -1)) return 'Yesterday';
  if (day === addDays(today, 1)) return 'Tomorrow';
  return fmtDay(day, 'short');
}

/**
 * "3 hours ago": how long ago something happened (the last backup, the last sync), shown beside
 * its date and time; the age is what tells you whether to worry.
 */
export function formatAge(fromMs: number, nowMs: number): string {
  const min = Math.max(0, Math.round((nowMs - fromMs) / 60_000));
  if (min < 1) return 'just now';
  if (min < 60) return `${min} minute${min === 1 ? '' : 's'} ago`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} hour${h === 1 ? '' : 's'} ago`;
  const d = Math.round(h / 24);
  return `${d} days ago`;
}

/** "2 h 05 min", "45 min", "0 min". */
export function fmtDuration(totalMin: number): string {
  const m = Math.max(0, Math.round(totalMin));
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  const r = m % 60;
  return r === 0 ? `${h} h` : `${h} h ${String(r).padStart(2, '0')} min`;
}

/** Value for an <input type="datetime-local"> showing instant `ms` in zone `tz`. */
export function toLocalInput(ms: number, tz: string): string {
  const p = localParts(ms, tz);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/** The instant an <input type="datetime-local"> value means in zone `tz`, or NaN. */
export function fromLocalInput(value: string, tz: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (!m) return NaN;
  return localTimeToInstant(m[1]!, Number(m[2]) * 60 + Number(m[3]), tz);
}

/** ISO 8601 UTC with Z, second precision. */
export function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * ISO 8601 with the zone's offset at that instant ("2026-11-22T08:30:00+01:00"): the instant is the
 * same, and the service records the offset the meal was eaten at.
 */
export function isoInZone(ms: number, tz: string): string {
  const off = offsetMinutes(ms, tz);
  const p = localParts(ms, tz);
  const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
  const sign = off < 0 ? '-' : '+';
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.trunc(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

/** The ISO 8601 timestamp of a meal as the service stores it: its instant at the offset it was eaten at. */
export function isoAsLived(meal: LivedAt): string {
  const lived = new Date(Math.floor(Date.parse(meal.timestamp) / 1000) * 1000 + meal.utc_offset_min * 60_000).toISOString().slice(0, 19);
  const a = Math.abs(meal.utc_offset_min);
  return `${lived}${meal.utc_offset_min < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

/** Every IANA zone the browser knows, with `current` first when the list lacks it (e.g. "UTC"). */
export function timeZoneNames(current: string): string[] {
  const list = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return list.includes(current) ? list : [current, ...list];
}

/**
 * The instants a wall-clock time of a day can mean in zone `tz`, earliest first: one, or two when
 * the clocks go back and the hour repeats (the first and the second 02:30). A time the clocks skip
 * (02:30 when they go forward) means none; `skipped` then holds the two instants it could be
 * taken for: read with the offset before the change (03:30 after it) and with the one after
 * (01:30 before it).
 */
export function wallTimeInstants(date: string, minuteOfDay: number, tz: string): { instants: number[]; skipped: number[] } {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d, 0, minuteOfDay);
  // Zones change offset at most once in a few days: the offsets a day either side cover every reading.
  const offsets = [...new Set([offsetMinutes(wall - 86_400_000, tz), offsetMinutes(wall, tz), offsetMinutes(wall + 86_400_000, tz)])];
  const readings = [...new Set(offsets.map((off) => wall - off * 60_000))].sort((a, b) => a - b);
  const instants = readings.filter((ms) => toLocalInput(ms, tz) === toLocalInput(wall, 'UTC'));
  return { instants, skipped: instants.length ? [] : readings };
}

/**
 * ISO 8601 with a given offset in minutes ("2026-11-22T21:00:00-05:00"): an instant written as it
 * was stored, at the offset where the meal was eaten.
 */
export function isoAtOffset(ms: number, offsetMin: number): string {
  const shifted = new Date(Math.floor(ms / 1000) * 1000 + offsetMin * 60_000);
  const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
  const sign = offsetMin < 0 ? '-' : '+';
  return `${pad(shifted.getUTCFullYear(), 4)}-${pad(shifted.getUTCMonth() + 1)}-${pad(shifted.getUTCDate())}T${pad(shifted.getUTCHours())}:${pad(shifted.getUTCMinutes())}:${pad(shifted.getUTCSeconds())}${sign}${pad(Math.trunc(Math.abs(offsetMin) / 60))}:${pad(Math.abs(offsetMin) % 60)}`;
}


